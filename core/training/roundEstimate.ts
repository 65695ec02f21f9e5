/**
 * One contribution's unbiased estimate as a round's exact sum reads it
 * (core/aggregation/exactSum.ts), decoded as the gradient arrives so that
 * the round's close only adds: each layer is reconstructed straight into one
 * flat vector (a sum of outer products row by row, by reconstruct's own
 * outerProductsInto), and one pass per layer checks it finite, applies the
 * multiplier and takes the statistics. At the close, accumulate is exactSum's.
 *
 * The values and their order are those of reconstruct → scaleContribution →
 * flattenContribution → estimateStats, so the sum's bits are those of
 * aggregate() over the dense estimates (the tests compare them), on the
 * server, in a cluster's processes and in every relay replica alike.
 */
import { accumulate, type EstimateStats, type SumPlan } from '../aggregation';
import { outerProducts, outerProductsInto, reconstruct } from '../atomo/reconstruct';
import type { ModelLayout } from '../model/layout';
import { EstimateOverflow, decodeSample, expectLayerCount, type SampleCheck } from './decodeLayers';

/** A contribution decoded for the round's sum: its flat estimate times its multiplier, and its statistics. */
export class RoundEstimate {
  /** ‖x‖₂ and the largest |xᵢ| of each tensor, of the estimate times its multiplier (estimateStats). */
  readonly stats: EstimateStats;
  /** What the estimate is multiplied by (the classroom attack); 1 for an honest worker. */
  readonly multiplier: number;
  readonly #flat: Float32Array;
  readonly #segments: readonly number[];

  private constructor(flat: Float32Array, segments: readonly number[], multiplier: number, stats: EstimateStats) {
    this.#flat = flat;
    this.#segments = segments;
    this.multiplier = multiplier;
    this.stats = stats;
  }

  /**
   * Decodes a contribution's encoded layers (decodeSample, with the caller's `check`), times `multiplier`, and
   * takes its statistics. Throws LayerCodecError, EstimateOverflow (a reconstructed entry is not finite, before the
   * multiplier), RangeError, or whatever `check` throws, in layer order as decodeContribution does.
   */
  static decode(
    layout: ModelLayout,
    encoded: readonly Uint8Array[],
    multiplier = 1,
    check?: SampleCheck,
  ): RoundEstimate {
    expectLayerCount(layout, encoded);
    let end = 0;
    for (const tensor of layout.tensors) {
      if (tensor.offset !== end) throw new RangeError(`${layout.kind}: tensor ${tensor.name} is not contiguous`);
      end += tensor.size;
    }
    if (end !== layout.parameterCount) throw new RangeError(`${layout.kind}: tensors do not cover the parameters`);
    const flat = new Float32Array(layout.parameterCount);
    const segmentMax: number[] = [];
    // Plain loops and locals (no closure over the sums): this runs once per gradient over every parameter.
    let squares = 0;
    for (let layer = 0; layer < layout.tensors.length; layer++) {
      const tensor = layout.tensors[layer]!;
      const sample = decodeSample(layout, encoded, layer, check);
      const products = outerProducts(sample);
      if (products === null) flat.set(reconstruct(sample), tensor.offset);
      else outerProductsInto(products, flat, tensor.offset);
      const from = tensor.offset;
      const to = from + tensor.size;
      // x − x is 0 for every finite x and NaN for NaN and ±Infinity (firstNonFinite), checked before the multiplier.
      for (let i = from; i < to; i++) if (flat[i]! - flat[i]! !== 0) throw new EstimateOverflow(layer, i - from);
      if (multiplier !== 1) for (let i = from; i < to; i++) flat[i] = Math.fround(flat[i]! * multiplier);
      let max = 0;
      for (let i = from; i < to; i++) {
        const x = flat[i]!;
        squares += x * x;
        max = Math.max(max, Math.abs(x));
      }
      segmentMax.push(max);
    }
    const segments = layout.tensors.map((t) => t.offset);
    return new RoundEstimate(flat, segments, multiplier, { norm: Math.sqrt(squares), segmentMax });
  }

  /** Adds round(fround(weight·x)·2^S) for every entry x into `into`: exactSum's accumulate, the layout's segments. */
  accumulate(into: Float64Array, weight: number, plan: Pick<SumPlan, 'scales'>): void {
    accumulate(into, this.#flat, weight, plan, this.#segments);
  }

  /** The flat estimate times its multiplier, as flattenContribution lays out the scaled reconstruction (read-only). */
  dense(): Float32Array {
    return this.#flat;
  }
}
