/**
 * Size limits of the aggregator, derived from the models rather than picked:
 * socket.io's maxHttpBufferSize must admit the largest honest gradient, and a
 * layer larger than its scheme can ever produce is refused before decoding.
 */
import type { SchemeName, Shape } from '../core/atomo/types';
import { HEADER_BYTES } from '../core/codec';
import { MODEL_KINDS, createModelLayout } from '../core/model/layout';
import { SCHEME_NAMES } from '../core/atomo/types';

/** Most QSGD levels a run may configure; levels travel as u16 and set the bits per entry. */
export const MAX_QSGD_LEVELS = 0xffff;

/** Room for the JSON part of a submission (ids, loss, per-layer statistics) and socket.io framing. */
const ENVELOPE_BYTES = 64 * 1024;

/** Bit length of s: the bits QSGD spends on a level 0..s. */
function levelBits(levels: number): number {
  return Math.floor(Math.log2(levels)) + 1;
}

/**
 * Upper bound on the encoded bytes of one layer under `scheme`
 * (docs/wire-format.md's byte formulas at their largest): dense 4mn;
 * entry-wise and DCT at most mn entries of a ≤5-byte varint and a float; spectral
 * k = min(m, n) atoms, PowerSGD rank min(m, n); QSGD (1 + b) bits and TernGrad 2 bits per entry.
 */
export function maxLayerBytes(scheme: SchemeName, shape: Shape, levels: number): number {
  const [rows, cols] = shape;
  const elements = rows * cols;
  switch (scheme) {
    case 'none':
      return HEADER_BYTES + 4 * elements;
    case 'atomo-entry':
    case 'atomo-dct':
      return HEADER_BYTES + 4 + 9 * elements;
    case 'atomo-svd':
      return HEADER_BYTES + 4 + 4 * Math.min(rows, cols) * (rows + cols + 1);
    case 'qsgd':
      return HEADER_BYTES + 6 + Math.ceil((elements * (1 + levelBits(levels))) / 8);
    case 'terngrad':
      return HEADER_BYTES + 4 + Math.ceil(elements / 4);
    case 'powersgd':
      return HEADER_BYTES + 4 + 4 * Math.min(rows, cols) * (rows + cols);
  }
}

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
      for (const tensor of layout.tensors) total += maxLayerBytes(scheme, tensor.shape, MAX_QSGD_LEVELS);
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
