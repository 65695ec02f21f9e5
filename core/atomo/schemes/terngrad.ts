/**
 * TernGrad (Wen et al. 2017; docs/design.md, "Schemes: variance and bytes"): ĝᵢ = ‖g‖∞ sign(gᵢ) tᵢ with
 * tᵢ ~ Bernoulli(|gᵢ|/‖g‖∞): ATOMO on entries with budget ‖g‖₁/‖g‖∞.
 */
import { bernoulli, randomBits } from '../../rng';
import { checkGradient } from '../gradient';
import type { Scheme } from './scheme';

/**
 * Ternarises each entry; entry i draws from randomBits(stream, i). The scaler
 * ‖g‖∞ is a float32 already (the largest |gᵢ|), so nothing is rounded.
 * Variance Σ |gᵢ|(‖g‖∞ − |gᵢ|).
 */
export const terngradScheme: Scheme<'terngrad'> = {
  name: 'terngrad',
  compress(grad, shape, _options, stream) {
    checkGradient(grad, shape);
    let scaler = 0;
    for (let i = 0; i < grad.length; i++) scaler = Math.max(scaler, Math.abs(grad[i]!));
    const ternary = new Int8Array(grad.length);
    let variance = 0;
    for (let i = 0; i < grad.length; i++) {
      const g = grad[i]!;
      const magnitude = Math.abs(g);
      if (magnitude === 0) continue;
      const p = magnitude / scaler;
      if (p >= 1 || bernoulli(randomBits(stream, i), p)) ternary[i] = g < 0 ? -1 : 1;
      variance += magnitude * (scaler - magnitude);
    }
    return { sample: { scheme: 'terngrad', shape, scaler, ternary }, variance };
  },
};
