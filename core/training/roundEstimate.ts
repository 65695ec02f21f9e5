/**
 * One contribution's unbiased estimate as a round's exact sum reads it
 * (core/aggregation/exactSum.ts), decoded once and never laid out dense
 * unless a rule needs every coordinate. A layer that is a sum of outer
 * products (spectral ATOMO, PowerSGD) stays factored: its rows are formed
 * one at a time, by the same rowOfOuterProducts that reconstruct uses, once
 * for the statistics when the gradient arrives and once more into the
 * round's accumulator at the close, so no per-worker dense array is
 * allocated. Every other layer keeps its reconstruction.
 *
 * The arithmetic is reconstruct → scaleContribution → flattenContribution →
 * estimateStats → accumulate entry by entry: each value is fround(Σₐ
 * lₐ·vₐⱼ) (float64 over the atoms in order), times the multiplier in float32,
 * and the statistics and the integer terms are taken in flat order; so the
 * sum's bits are those of aggregate() over the dense estimates (the tests
 * compare them), on the server and in every relay replica alike.
 */
import { ROUNDER, type EstimateStats, type SumPlan } from '../aggregation';
import { outerProducts, reconstruct, rowOfOuterProducts, type OuterProducts } from '../atomo/reconstruct';
import type { ModelLayout } from '../model/layout';
import { EstimateOverflow, decodeSample, expectLayerCount, type SampleCheck } from './decodeLayers';

/** A layer as kept: its dense reconstruction, or its outer products. */
type KeptLayer = { readonly dense: Float32Array } | { readonly products: OuterProducts };

/** Scratch of one row of outer products: the atoms' left coefficients and the row in float64. */
interface RowScratch {
  readonly left: Float64Array;
  readonly row: Float64Array;
}

function scratchFor(products: OuterProducts): RowScratch {
  return { left: new Float64Array(products.count), row: new Float64Array(products.shape[1]) };
}

/** A contribution decoded for the round's sum: its statistics, its terms, and (when asked) its dense form. */
export class RoundEstimate {
  /** ‖x‖₂ and the largest |xᵢ| of each tensor, of the estimate times its multiplier (estimateStats). */
  readonly stats: EstimateStats;
  /** What the estimate is multiplied by (the classroom attack); 1 for an honest worker. */
  readonly multiplier: number;
  readonly #layers: readonly KeptLayer[];
  readonly #offsets: readonly number[];
  readonly #sizes: readonly number[];
  readonly #length: number;

  private constructor(layout: ModelLayout, layers: readonly KeptLayer[], multiplier: number, stats: EstimateStats) {
    this.#layers = layers;
    this.#offsets = layout.tensors.map((t) => t.offset);
    this.#sizes = layout.tensors.map((t) => t.size);
    this.#length = layout.parameterCount;
    this.multiplier = multiplier;
    this.stats = stats;
  }

  /**
   * Decodes a contribution's encoded layers (decodeSample, with the caller's `check`) and takes its statistics
   * times `multiplier`. Throws LayerCodecError, EstimateOverflow (a reconstructed entry is not finite, before the
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
    const m = multiplier;
    let squares = 0;
    const segmentMax: number[] = [];
    const layers = layout.tensors.map((tensor, layer): KeptLayer => {
      const sample = decodeSample(layout, encoded, layer, check);
      const products = outerProducts(sample);
      let max = 0;
      if (products === null) {
        // decodeLayer's dense values are its own copy (readFloat32Block), never read from the message again.
        const dense = sample.scheme === 'none' ? sample.values : reconstruct(sample);
        for (let i = 0; i < dense.length; i++) {
          const x = dense[i]!;
          // x − x is 0 for every finite x and NaN for NaN and ±Infinity (firstNonFinite).
          if (x - x !== 0) throw new EstimateOverflow(layer, i);
          const y = m === 1 ? x : Math.fround(x * m);
          squares += y * y;
          max = Math.max(max, Math.abs(y));
        }
        segmentMax.push(max);
        return { dense };
      }
      const [rows, cols] = tensor.shape;
      const { left, row } = scratchFor(products);
      for (let i = 0; i < rows; i++) {
        // A zero row adds nothing to either statistic.
        if (!rowOfOuterProducts(products, i, left, row)) continue;
        for (let j = 0; j < cols; j++) {
          const x = Math.fround(row[j]!);
          if (x - x !== 0) throw new EstimateOverflow(layer, i * cols + j);
          const y = m === 1 ? x : Math.fround(x * m);
          squares += y * y;
          max = Math.max(max, Math.abs(y));
        }
      }
      segmentMax.push(max);
      return { products };
    });
    return new RoundEstimate(layout, layers, multiplier, { norm: Math.sqrt(squares), segmentMax });
  }

  /**
   * Adds round(fround(weight·x)·2^S) (ties to even) for every entry x of the estimate into `into`, as
   * exactSum's accumulate does for the dense estimate; the segments are the layout's tensors.
   */
  accumulate(into: Float64Array, weight: number, plan: Pick<SumPlan, 'scales'>): void {
    if (into.length !== this.#length)
      throw new RangeError(`an estimate has ${this.#length} entries, expected ${into.length}`);
    const m = this.multiplier;
    this.#layers.forEach((kept, s) => {
      const factor = 2 ** plan.scales[s]!;
      const offset = this.#offsets[s]!;
      if ('dense' in kept) {
        const dense = kept.dense;
        for (let i = 0; i < dense.length; i++) {
          const y = m === 1 ? dense[i]! : Math.fround(dense[i]! * m);
          const t = weight === 1 ? y : Math.fround(weight * y);
          into[offset + i]! += t * factor + ROUNDER - ROUNDER;
        }
        return;
      }
      const products = kept.products;
      const [rows, cols] = products.shape;
      const { left, row } = scratchFor(products);
      // A zero row's terms are +0: adding them changes no entry of the sum.
      for (let i = 0; i < rows; i++) {
        if (!rowOfOuterProducts(products, i, left, row)) continue;
        const at = offset + i * cols;
        for (let j = 0; j < cols; j++) {
          const x = Math.fround(row[j]!);
          const y = m === 1 ? x : Math.fround(x * m);
          const t = weight === 1 ? y : Math.fround(weight * y);
          into[at + j]! += t * factor + ROUNDER - ROUNDER;
        }
      }
    });
  }

  /** The flat estimate times its multiplier, as flattenContribution lays out the scaled reconstruction. */
  dense(): Float32Array {
    const out = new Float32Array(this.#length);
    const m = this.multiplier;
    this.#layers.forEach((kept, s) => {
      const offset = this.#offsets[s]!;
      if ('dense' in kept) {
        out.set(kept.dense, offset);
      } else {
        const products = kept.products;
        const [rows, cols] = products.shape;
        const { left, row } = scratchFor(products);
        for (let i = 0; i < rows; i++) if (rowOfOuterProducts(products, i, left, row)) out.set(row, offset + i * cols);
      }
      if (m !== 1) for (let i = offset; i < offset + this.#sizes[s]!; i++) out[i]! *= m;
    });
    return out;
  }
}
