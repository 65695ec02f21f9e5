/**
 * Size limits of the aggregator, derived from the models rather than picked:
 * socket.io's maxHttpBufferSize must admit the largest honest gradient
 * (core/codec/sizes.ts's maxLayerBytes, which validation also uses to refuse a
 * layer larger than its scheme can ever produce before decoding).
 */
import { MAX_LEVELS, SCHEME_NAMES } from '../core/atomo';
import { maxLayerBytes } from '../core/codec';
import { RUN_CONFIG_BOUNDS } from '../core/schema';
import { MODEL_KINDS, createModelLayout } from '../core/model/layout';

/** Room for the JSON part of a submission (ids, loss, per-layer statistics) and socket.io framing. */
const ENVELOPE_BYTES = 64 * 1024;

/**
 * The maxHttpBufferSize of the socket.io server: the largest submission any
 * model and scheme can honestly produce, plus the JSON envelope, rounded up to
 * a MiB. Beyond it socket.io drops the connection with a bare transport
 * error, so clients check their payload against it before sending.
 */
export function computeMaxMessageBytes(): number {
  let largest = 0;
  for (const kind of MODEL_KINDS) {
    const layout = createModelLayout(kind);
    for (const scheme of SCHEME_NAMES) {
      let total = 0;
      for (const tensor of layout.tensors) total += maxLayerBytes(scheme, tensor.shape, MAX_LEVELS, RUN_CONFIG_BOUNDS.bucketSize.minNonZero);
      largest = Math.max(largest, total);
    }
  }
  const MiB = 1024 * 1024;
  return Math.ceil((largest + ENVELOPE_BYTES) / MiB) * MiB;
}

/** Token-bucket rate limit per socket: a steady rate and a burst. */
export interface RateLimit {
  readonly perSecond: number;
  readonly burst: number;
}

/**
 * A worker sends one gradient per round and a dashboard a few requests; 20
 * messages a second with bursts of 40 is far above honest traffic and far
 * below what would starve the event loop.
 */
export const DEFAULT_RATE_LIMIT: RateLimit = { perSecond: 20, burst: 40 };
