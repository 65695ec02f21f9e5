/**
 * The update of a round, the one function the server and every worker call
 * (docs/protocol.md, "Downlink"): the server to step its own model, a worker
 * under the `relay` or `atomo` downlink to step its replica from the bytes the
 * server forwarded. In one fixed order:
 *
 *   decode     each contribution's encoded layers (core/codec), reconstruct
 *              the estimate (core/atomo), scale it by its multiplier (the
 *              classroom attack, 1 for an honest worker)
 *   aggregate  the run's rule over the contributions in ascending worker id
 *              (core/aggregation; float64 sums, so arrival order never matters)
 *   step       SGD with momentum on float32 copies (core/model/optimiser.ts)
 *
 * Every operation is IEEE arithmetic on float32/float64 values with no
 * transcendental function except in the DCT's twiddles (atomo-dct), so any
 * two engines that compute Math.cos alike reach the same bits; `modelHash`
 * checks it every round and a mismatch costs one full model (a `sync`).
 */
import { aggregate, finishMean, planSum, type Aggregate } from '../aggregation';
import { reconstruct } from '../atomo/reconstruct';
import { SCHEMES } from '../atomo/schemes';
import { squaredNorm } from '../atomo/variance';
import { encodeForWire } from '../codec';
import { firstNonFinite } from '../codec/floats';
import type { ModelLayout } from '../model/layout';
import { sgdMomentumStep } from '../model/optimiser';
import type { AggregationRule } from '../schema/runConfig';
import { EstimateOverflow, decodeSample, expectLayerCount, type SampleCheck } from './decodeLayers';
import { RoundEstimate } from './roundEstimate';

export { EstimateOverflow, LayerCodecError } from './decodeLayers';

/** The state both sides keep in step: the weights and the momentum. */
export interface ModelState {
  readonly params: Float32Array;
  readonly velocity: Float32Array;
}

/** An update the maths refused (non-finite aggregate, momentum or weights): nothing was applied. */
export class UpdateRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UpdateRefused';
  }
}

/**
 * One contribution's estimate, layer by layer, from its encoded layers:
 * decodeLayer (expected index and shape) → `check` (the server's scheme
 * rules; a worker passes none) → reconstruct → finite. Throws
 * LayerCodecError, EstimateOverflow, or whatever `check` throws.
 */
export function decodeContribution(
  layout: ModelLayout,
  layers: readonly Uint8Array[],
  check?: SampleCheck,
): Float32Array[] {
  expectLayerCount(layout, layers);
  return layout.tensors.map((_, layer) => {
    const estimate = reconstruct(decodeSample(layout, layers, layer, check));
    const bad = firstNonFinite(estimate);
    if (bad >= 0) throw new EstimateOverflow(layer, bad);
    return estimate;
  });
}

/** Multiplies every layer's estimate in place (the classroom attack's ±factor; 1 leaves it as it is). */
export function scaleContribution(estimates: readonly Float32Array[], multiplier: number): void {
  if (multiplier === 1) return;
  for (const estimate of estimates) for (let i = 0; i < estimate.length; i++) estimate[i]! *= multiplier;
}

/** The per-layer estimates laid out as one flat vector of the model's parameters. */
export function flattenContribution(layout: ModelLayout, estimates: readonly Float32Array[]): Float32Array {
  const flat = new Float32Array(layout.parameterCount);
  layout.tensors.forEach((tensor, layer) => flat.set(estimates[layer]!, tensor.offset));
  return flat;
}

/** Index of the first non-finite value, as a message, or null. */
function nonFinite(values: Float32Array, what: string): string | null {
  const at = firstNonFinite(values);
  return at < 0 ? null : `${what} at parameter ${at}`;
}

/**
 * The round's update from the contributions' flat estimates: the run's rule
 * (core/aggregation, each tensor its own segment; exact sums, so neither the
 * order nor a cluster's grouping changes a bit). Throws UpdateRefused when it
 * is not finite.
 */
export function aggregateContributions(
  layout: ModelLayout,
  rule: AggregationRule,
  estimates: readonly Float32Array[],
): Aggregate {
  const combined = aggregate(
    rule,
    estimates,
    layout.parameterCount,
    layout.tensors.map((t) => t.offset),
  );
  const bad = nonFinite(combined.value, 'the aggregated gradient is not finite');
  if (bad !== null) throw new UpdateRefused(bad);
  return combined;
}

/**
 * aggregateContributions over decoded contributions (RoundEstimate), the
 * server's and every relay replica's combining: the mean and the norm bound
 * add each estimate's terms straight into one exact sum, factored layers row
 * by row; the coordinate-wise rules read the dense estimates. The same bits
 * as aggregateContributions over the dense estimates. Throws UpdateRefused
 * when it is not finite.
 */
export function aggregateEstimates(
  layout: ModelLayout,
  rule: AggregationRule,
  estimates: readonly RoundEstimate[],
): Aggregate {
  if (rule.kind !== 'mean' && rule.kind !== 'norm-bound')
    return aggregateContributions(
      layout,
      rule,
      estimates.map((e) => e.dense()),
    );
  if (estimates.length === 0) throw new RangeError('nothing to aggregate');
  const segments = layout.tensors.map((t) => t.offset);
  const plan = planSum(
    rule,
    estimates.map((e) => e.stats),
  );
  const sum = new Float64Array(layout.parameterCount);
  estimates.forEach((e, i) => e.accumulate(sum, plan.weights[i]!, plan));
  const value = finishMean(sum, plan, segments);
  const bad = nonFinite(value, 'the aggregated gradient is not finite');
  if (bad !== null) throw new UpdateRefused(bad);
  return { value, clipped: plan.clipped, dropped: 0 };
}

/**
 * One SGD-with-momentum step with `update` on copies of `state` (the
 * server's and every replica's). Throws UpdateRefused, applying nothing,
 * when the update, the momentum or the weights would not be finite.
 */
export function stepModel(state: ModelState, update: Float32Array, learningRate: number, momentum: number): ModelState {
  const badUpdate = nonFinite(update, 'the aggregated gradient is not finite');
  if (badUpdate !== null) throw new UpdateRefused(badUpdate);
  const params = state.params.slice();
  const velocity = state.velocity.slice();
  sgdMomentumStep(params, velocity, update, learningRate, momentum);
  const badVelocity = nonFinite(velocity, 'the momentum overflows');
  if (badVelocity !== null) throw new UpdateRefused(`${badVelocity}; the update was discarded`);
  const badParams = nonFinite(params, 'the weights overflow');
  if (badParams !== null) throw new UpdateRefused(`${badParams}; the update was discarded`);
  return { params, velocity };
}

/** The Philox worker id of the server's own draws (the `atomo` downlink), apart from every worker slot. */
export const SERVER_STREAM_WORKER = 0xffffffff;

/** Per layer of a compressed update: E‖û − u‖² (closed form), the realised ‖û − u‖² and ‖u‖². */
export interface UpdateLayerStats {
  readonly closedForm: number;
  readonly realised: number;
  readonly updateNormSq: number;
}

/**
 * The `atomo` downlink's message: the aggregated update `update` (flat)
 * compressed per layer by spectral ATOMO with budget s (stream {seed,
 * SERVER_STREAM_WORKER, round: version, layer}), encoded (dense where that is
 * smaller), and the estimate the workers will decode from those bytes.
 */
export function compressUpdate(
  layout: ModelLayout,
  update: Float32Array,
  budget: number,
  seed: number,
  version: number,
): { readonly layers: Uint8Array[]; readonly estimate: Float32Array; readonly stats: UpdateLayerStats[] } {
  const layers = layout.tensors.map((tensor, layer) => {
    const values = update.subarray(tensor.offset, tensor.offset + tensor.size);
    const { sample, variance } = SCHEMES['atomo-svd'].compress(
      values,
      tensor.shape,
      { budget },
      { seed, worker: SERVER_STREAM_WORKER, round: version, layer },
    );
    return { bytes: encodeForWire(sample, layer), variance };
  });
  const encoded = layers.map((l) => l.bytes);
  // Decoded from the bytes, exactly as a worker does: the server applies what it sent.
  const sentAs: string[] = [];
  const estimate = flattenContribution(
    layout,
    decodeContribution(layout, encoded, (layer, sample) => (sentAs[layer] = sample.scheme)),
  );
  const stats = layout.tensors.map((tensor, layer) => {
    const sent = estimate.subarray(tensor.offset, tensor.offset + tensor.size);
    const exact = update.subarray(tensor.offset, tensor.offset + tensor.size);
    let realised = 0;
    for (let i = 0; i < sent.length; i++) realised += (sent[i]! - exact[i]!) ** 2;
    // A layer sent dense (smaller than its atoms) carries no sampling variance.
    return {
      closedForm: sentAs[layer] === 'none' ? 0 : layers[layer]!.variance,
      realised,
      updateNormSq: squaredNorm(exact),
    };
  });
  return { layers: encoded, estimate, stats };
}

/** What takes a replica from version v − 1 to v under a compressed downlink. */
export type DownlinkUpdate =
  | {
      readonly kind: 'relay';
      readonly contributions: readonly { readonly layers: readonly Uint8Array[]; readonly multiplier: number }[];
    }
  | { readonly kind: 'atomo'; readonly layers: readonly Uint8Array[] };

/** The optimiser settings of a run that the update needs. */
export interface UpdateRule {
  readonly aggregation: AggregationRule;
  readonly learningRate: number;
  readonly momentum: number;
}

/**
 * A worker's replica one round on: every relayed contribution decoded,
 * scaled and aggregated by the run's rule, or the server's ATOMO update as
 * sent, then the same SGD step the server took.
 */
export function applyDownlink(
  layout: ModelLayout,
  state: ModelState,
  message: DownlinkUpdate,
  rule: UpdateRule,
): ModelState {
  const update =
    message.kind === 'relay'
      ? aggregateEstimates(
          layout,
          rule.aggregation,
          message.contributions.map(({ layers, multiplier }) => RoundEstimate.decode(layout, layers, multiplier)),
        ).value
      : flattenContribution(layout, decodeContribution(layout, message.layers));
  return stepModel(state, update, rule.learningRate, rule.momentum);
}

/**
 * A 64-bit fingerprint of the weights and the momentum (two FNV-1a lanes over
 * their float32 bit patterns, 16 hex digits): equal states, equal hashes; a
 * replica that drifted by one bit almost surely differs.
 */
export function modelHash(state: ModelState): string {
  let a = 0x811c9dc5;
  let b = 0x9747b28c;
  for (const values of [state.params, state.velocity]) {
    const words = new Uint32Array(values.buffer, values.byteOffset, values.length);
    for (let i = 0; i < words.length; i++) {
      const w = words[i]!;
      a = Math.imul(a ^ w, 0x01000193);
      b = Math.imul(b ^ (w >>> 16) ^ (w << 16), 0x01000193);
    }
  }
  return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');
}
