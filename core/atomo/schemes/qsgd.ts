/**
 * s-level QSGD (Alistarh et al. 2017; docs/design.md): the gradient is cut
 * into buckets of d consecutive entries (the whole layer when d = 0), and in
 * bucket k with norm ‖g_k‖₂, ĝᵢ = ‖g_k‖₂ sign(gᵢ) ξᵢ/s with ξᵢ ∈ {l, l+1},
 * l = ⌊s|gᵢ|/‖g_k‖₂⌋ and P(ξᵢ = l+1) = s|gᵢ|/‖g_k‖₂ − l.
 * s = 1 with one bucket is 1-bit QSGD, ATOMO on entries with budget ‖g‖₁/‖g‖₂.
 * Levels 0..s cost ⌈log2(s+1)⌉ bits, so s = 2^b − 1 (1, 3, 7, 15) uses them fully.
 */
import { bernoulli, randomBits } from '../../rng';
import { checkGradient } from '../gradient';
import type { QsgdCoding } from '../types';
import { DEFAULT_LEVELS, DEFAULT_QSGD_CODING, MAX_LEVELS, type Scheme, type SchemeOptions } from './scheme';

/** Throws RangeError unless s is an integer in 1..65535 (levels travel as u16). */
export function checkLevels(levels: number): void {
  if (!Number.isInteger(levels) || levels < 1 || levels > MAX_LEVELS) {
    throw new RangeError(`QSGD levels must be an integer in 1..${MAX_LEVELS}, got ${levels}`);
  }
}

/** Largest bucket size accepted (it travels as u32; a layer is never larger than 2³⁰ entries). */
export const MAX_BUCKET_SIZE = 2 ** 30;

/** Throws RangeError unless d is an integer in 0..2³⁰ (0: one bucket per layer). */
export function checkBucketSize(bucketSize: number): void {
  if (!Number.isInteger(bucketSize) || bucketSize < 0 || bucketSize > MAX_BUCKET_SIZE) {
    throw new RangeError(
      `QSGD bucket size must be an integer in 0..${MAX_BUCKET_SIZE} (0: one bucket per layer), got ${bucketSize}`,
    );
  }
}

/** Number of buckets of a layer of n entries: ⌈n/d⌉, or 1 for d = 0 (and for an empty layer). */
export function bucketCount(elements: number, bucketSize: number): number {
  return bucketSize === 0 ? 1 : Math.max(1, Math.ceil(elements / bucketSize));
}

/** Throws RangeError unless `coding` is 'elias' or 'fixed'. */
export function checkQsgdCoding(coding: unknown): asserts coding is QsgdCoding {
  if (coding !== 'elias' && coding !== 'fixed') {
    throw new RangeError(`QSGD coding must be 'elias' or 'fixed', got ${String(coding)}`);
  }
}

/**
 * The levels s, bucket size d and coding that `options` ask for (unset: DEFAULT_LEVELS, one bucket per layer,
 * DEFAULT_QSGD_CODING), checked.
 */
function knobsOf(options: SchemeOptions): { levels: number; bucketSize: number; coding: QsgdCoding } {
  const levels = options.levels ?? DEFAULT_LEVELS;
  checkLevels(levels);
  const bucketSize = options.bucketSize ?? 0;
  checkBucketSize(bucketSize);
  const coding = options.qsgdCoding ?? DEFAULT_QSGD_CODING;
  checkQsgdCoding(coding);
  return { levels, bucketSize, coding };
}

/**
 * Quantises each entry stochastically to a level of its bucket's ‖g_k‖₂/s;
 * entry i draws from randomBits(stream, i). The bucket norms are what is
 * sent (float32) and the probabilities use those float32 norms, so E ĝ = g
 * for the values actually received. Variance Σ_k (‖g_k‖/s)² Σ_{i∈k} f(1 − f),
 * f the fractional part of s|gᵢ|/‖g_k‖. The coding (options.qsgdCoding) only
 * says how the codec writes the levels: the draws are the same for both.
 */
export const qsgdScheme: Scheme<'qsgd'> = {
  name: 'qsgd',
  compress(grad, shape, options, stream) {
    checkGradient(grad, shape);
    const { levels: s, bucketSize, coding } = knobsOf(options);
    const n = grad.length;
    const d = bucketSize === 0 ? Math.max(n, 1) : bucketSize;
    const norms = new Float32Array(bucketCount(n, bucketSize));
    const negative = new Uint8Array(n);
    const level = new Uint16Array(n);
    let variance = 0;
    for (let k = 0; k < norms.length; k++) {
      const start = k * d;
      const end = Math.min(n, start + d);
      let sumSq = 0;
      for (let i = start; i < end; i++) sumSq += grad[i]! * grad[i]!;
      const norm = Math.fround(Math.sqrt(sumSq));
      if (!Number.isFinite(norm)) throw new RangeError('QSGD: a bucket norm ‖g_k‖₂ overflows float32');
      norms[k] = norm;
      if (norm === 0) continue;
      const step = norm / s; // the spacing of the bucket's levels, ‖g_k‖/s
      for (let i = start; i < end; i++) {
        const g = grad[i]!;
        // |gᵢ| ≤ float32(‖g_k‖) because rounding to float32 is monotone and gᵢ
        // is a float32, so the position is in [0, s].
        const position = (s * Math.abs(g)) / norm;
        const lower = Math.min(Math.floor(position), s);
        const fraction = position - lower;
        const up = fraction > 0 && bernoulli(randomBits(stream, i), fraction);
        level[i] = up ? lower + 1 : lower;
        // The Elias coding sends no sign for a level 0 (its estimate is 0 either way), so its sample has none.
        negative[i] = g < 0 && (coding === 'fixed' || level[i] !== 0) ? 1 : 0;
        variance += step * step * fraction * (1 - fraction);
      }
    }
    return { sample: { scheme: 'qsgd', shape, levels: s, coding, bucketSize, norms, negative, level }, variance };
  },
};
