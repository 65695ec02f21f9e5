/**
 * The whole path of one layer, as worker and aggregator run it:
 * compress → encode → decode → reconstruct.
 */
import { decodeLayer, encodeLayer } from '../codec';
import type { StreamId } from '../rng';
import { reconstruct } from './reconstruct';
import { SCHEMES } from './schemes';
import type { QsgdCoding, SchemeName, Shape } from './types';

/** Options of estimate(); unset knobs take DEFAULT_BUDGET (2) and DEFAULT_LEVELS (1); atomo-auto needs byteBudget. */
export interface EstimateOptions {
  /** ATOMO budget s (atomo-entry, atomo-svd). */
  readonly budget?: number;
  /** QSGD levels s (qsgd). */
  readonly levels?: number;
  /** QSGD bucket size d (0 or unset: one bucket). */
  readonly bucketSize?: number;
  /** QSGD's coding on the wire (unset: 'elias'). */
  readonly qsgdCoding?: QsgdCoding;
  /** TernGrad's clipping multiple c (0 or unset: none). */
  readonly terngradClip?: number;
  /** atomo-auto: the layer's expected bytes, header included. */
  readonly byteBudget?: number;
  /** Run seed; the draws come from stream {seed, worker 0, round 0, layer 0}. */
  readonly seed: number;
}

/** One unbiased estimate of g, the bytes it took on the wire, and its closed-form variance E‖ĝ − g‖². */
export interface EstimateResult {
  readonly estimate: Float32Array;
  readonly bytes: number;
  readonly variance: number;
}

/** ĝ for `grad` under `scheme`, decoded from the exact bytes a worker would send (docs/design.md, "Estimator"). */
export function estimate(scheme: SchemeName, grad: Float32Array, shape: Shape, opts: EstimateOptions): EstimateResult {
  const stream: StreamId = { seed: opts.seed, worker: 0, round: 0, layer: 0 };
  const options = {
    ...(opts.budget === undefined ? {} : { budget: opts.budget }),
    ...(opts.levels === undefined ? {} : { levels: opts.levels }),
    ...(opts.bucketSize === undefined ? {} : { bucketSize: opts.bucketSize }),
    ...(opts.qsgdCoding === undefined ? {} : { qsgdCoding: opts.qsgdCoding }),
    ...(opts.terngradClip === undefined ? {} : { terngradClip: opts.terngradClip }),
    ...(opts.byteBudget === undefined ? {} : { byteBudget: opts.byteBudget }),
  };
  const { sample, variance } = SCHEMES[scheme].compress(grad, shape, options, stream);
  const bytes = encodeLayer(sample, stream.layer);
  const decoded = decodeLayer(bytes).sample;
  return { estimate: reconstruct(decoded), bytes: bytes.length, variance };
}
