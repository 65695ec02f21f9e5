/**
 * s-level QSGD (Alistarh et al. 2017; DESIGN.md §3): ĝᵢ = ‖g‖₂ sign(gᵢ) ξᵢ/s
 * with ξᵢ ∈ {l, l+1}, l = ⌊s|gᵢ|/‖g‖₂⌋ and P(ξᵢ = l+1) = s|gᵢ|/‖g‖₂ − l.
 * s = 1 is 1-bit QSGD, ATOMO on entries with budget ‖g‖₁/‖g‖₂.
 */
import { bernoulli, randomBits } from '../../rng';
import { checkGradient } from '../gradient';
import { squaredNorm } from '../variance';
import { DEFAULT_LEVELS, MAX_LEVELS, type Scheme } from './scheme';

/** Throws RangeError unless s is an integer in 1..65535 (levels travel as u16). */
export function checkLevels(levels: number): void {
  if (!Number.isInteger(levels) || levels < 1 || levels > MAX_LEVELS) {
    throw new RangeError(`QSGD levels must be an integer in 1..${MAX_LEVELS}, got ${levels}`);
  }
}

/**
 * Quantises each entry stochastically to a level of ‖g‖₂/s; entry i draws
 * from randomBits(stream, i). The norm is what is sent (float32) and the
 * probabilities use that float32 norm, so E ĝ = g for the values actually
 * received. Variance Σ (‖g‖/s)² f(1 − f), f the fractional part of s|gᵢ|/‖g‖.
 */
export const qsgdScheme: Scheme<'qsgd'> = {
  name: 'qsgd',
  compress(grad, shape, options, stream) {
    checkGradient(grad, shape);
    const s = options.levels ?? DEFAULT_LEVELS;
    checkLevels(s);
    const norm = Math.fround(Math.sqrt(squaredNorm(grad)));
    if (!Number.isFinite(norm)) throw new RangeError('QSGD: ‖g‖₂ overflows float32');
    const n = grad.length;
    const negative = new Uint8Array(n);
    const level = new Uint16Array(n);
    const step = norm / s; // the spacing of the levels, ‖g‖/s
    let variance = 0;
    if (norm > 0) {
      for (let i = 0; i < n; i++) {
        const g = grad[i]!;
        negative[i] = g < 0 ? 1 : 0;
        // |gᵢ| ≤ float32(‖g‖) because rounding to float32 is monotone and gᵢ
        // is a float32, so the position is in [0, s].
        const position = (s * Math.abs(g)) / norm;
        const lower = Math.min(Math.floor(position), s);
        const fraction = position - lower;
        const up = fraction > 0 && bernoulli(randomBits(stream, i), fraction);
        level[i] = up ? lower + 1 : lower;
        variance += step * step * fraction * (1 - fraction);
      }
    }
    return { sample: { scheme: 'qsgd', shape, levels: s, norm, negative, level }, variance };
  },
};
