/**
 * TernGrad (Wen et al. 2017; docs/design.md, "Schemes: variance and bytes"): ĝᵢ = s sign(gᵢ) tᵢ with one scaler
 * s = ‖g‖∞ per layer and tᵢ ~ Bernoulli(|gᵢ|/s): ATOMO on entries with budget ‖g‖₁/‖g‖∞. With its paper's gradient
 * clipping (options.terngradClip = c > 0) the layer is first clipped to ĉᵢ = max(−T, min(T, gᵢ)), T = c·σ, σ the
 * standard deviation of the layer's entries, and ĉ is ternarised (s = ‖ĉ‖∞): unbiased for ĉ, biased for g.
 */
import { bernoulli, randomBits } from '../../rng';
import { checkGradient } from '../gradient';
import type { Scheme } from './scheme';

/** The clipping multiple c TernGrad's paper uses (±2.5σ). */
export const TERNGRAD_PAPER_CLIP = 2.5;

/** Throws RangeError unless c is a finite number ≥ 0 (0: no clipping). */
export function checkTerngradClip(clip: number): void {
  if (!Number.isFinite(clip) || clip < 0) {
    throw new RangeError(`TernGrad clipping multiple must be a finite number ≥ 0 (0: none), got ${clip}`);
  }
}

/**
 * The clipping threshold T = c·σ of a layer, rounded to float32 so the clipped entries and their maximum (the scaler
 * sent) stay float32; σ = √(mean (gᵢ − ḡ)²). Infinity when c = 0, or when σ = 0 (every entry equal: none is an
 * outlier, and clipping to 0 would drop the layer).
 */
export function terngradThreshold(grad: Float32Array, clip: number): number {
  if (clip === 0 || grad.length === 0) return Infinity;
  let sum = 0;
  for (let i = 0; i < grad.length; i++) sum += grad[i]!;
  const mean = sum / grad.length;
  let squares = 0;
  for (let i = 0; i < grad.length; i++) squares += (grad[i]! - mean) ** 2;
  const sigma = Math.sqrt(squares / grad.length);
  return sigma === 0 ? Infinity : Math.fround(clip * sigma);
}

/**
 * Ternarises each entry (after clipping, when asked); entry i draws from randomBits(stream, i). The scaler is the
 * largest |ĉᵢ|, a float32 already (T is), so nothing is rounded. Variance of the estimate of ĉ (= g unclipped):
 * Σ |ĉᵢ|(s − |ĉᵢ|) = Σ s|ĉᵢ| − ĉᵢ².
 */
export const terngradScheme: Scheme<'terngrad'> = {
  name: 'terngrad',
  compress(grad, shape, options, stream) {
    checkGradient(grad, shape);
    const clip = options.terngradClip ?? 0;
    checkTerngradClip(clip);
    const threshold = terngradThreshold(grad, clip);
    let scaler = 0;
    for (let i = 0; i < grad.length; i++) scaler = Math.max(scaler, Math.min(Math.abs(grad[i]!), threshold));
    const ternary = new Int8Array(grad.length);
    let variance = 0;
    for (let i = 0; i < grad.length; i++) {
      const g = grad[i]!;
      const magnitude = Math.min(Math.abs(g), threshold);
      if (magnitude === 0) continue;
      const p = magnitude / scaler;
      if (p >= 1 || bernoulli(randomBits(stream, i), p)) ternary[i] = g < 0 ? -1 : 1;
      variance += magnitude * (scaler - magnitude);
    }
    return { sample: { scheme: 'terngrad', shape, scaler, ternary }, variance };
  },
};
