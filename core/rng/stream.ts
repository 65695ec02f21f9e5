/**
 * Where each random draw of the project comes from. A draw is addressed by
 * (run seed, worker, round, layer, atom index):
 *   key     = (seed, worker)
 *   counter = (atom index, round, layer, 0)
 * and uses the first Philox output word. Same address, same bits, on every
 * device; a new round or layer is a fresh, independent stream.
 */
import { philox4x32Words } from './philox';

/** Coordinates of one stream of draws (one layer of one worker in one round). */
export interface StreamId {
  readonly seed: number;
  readonly worker: number;
  readonly round: number;
  readonly layer: number;
}

const scratch = new Uint32Array(4);

/** The 32 random bits for atom `index` of a stream. */
export function randomBits(stream: StreamId, index: number): number {
  philox4x32Words(index, stream.round, stream.layer, 0, stream.seed, stream.worker, scratch);
  return scratch[0]!;
}

/** A uniform in [0, 1) with 24 bits of resolution, exactly representable in f32. */
export function uniform24(bits: number): number {
  return (bits >>> 8) / 0x1000000;
}

/**
 * Integer threshold of a Bernoulli(p) draw: keep iff (bits >>> 8) < threshold.
 * Comparing integers makes the CPU and the GPU agree bit for bit; p is
 * represented to 2⁻²⁴, so p = 1 always keeps and p = 0 never does.
 */
export function bernoulliThreshold(p: number): number {
  if (!(p > 0)) return 0;
  if (p >= 1) return 0x1000000;
  return Math.round(p * 0x1000000);
}

/** Bernoulli(p) from 32 random bits (see bernoulliThreshold). */
export function bernoulli(bits: number, p: number): boolean {
  return bits >>> 8 < bernoulliThreshold(p);
}
