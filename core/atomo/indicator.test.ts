/**
 * The indicator ‖G‖_*·√(m+n)/‖g‖₁: its closed form on matrices whose
 * singular values are known, the range every gradient's lies in (reached at
 * both ends), the same value from a gradient's factors as from the matrix,
 * and the paper's claim it encodes: at equal numbers sent (s atoms of m + n
 * numbers against s(m + n) entries), spectral ATOMO has the lower variance
 * exactly when it is below 1.
 */
import { describe, expect, it } from 'vitest';
import { lowRankMatrix, randomMatrix } from '../linalg/random-matrix';
import { indicatorRange, l1Norm, nuclearNorm, spectralIndicator } from './indicator';
import { factoredGradient, lowRankGradient, randomGradient } from './testing/gradients';
import { atomicVariance } from './variance';
import { samplingProbabilities } from './waterfilling';
import { spectralDecomposition } from './decompositions/spectral';
import type { Shape } from './types';

const indicatorOf = (grad: Float32Array, shape: Shape) => spectralIndicator(nuclearNorm(grad, shape), grad, shape)!;

describe('the indicator ‖G‖_*·√(m+n)/‖g‖₁', () => {
  it('is σ·√(m+n)/(‖u‖₁‖v‖₁) for a rank-one uvᵀ, ‖g‖₂√(n+1)/‖g‖₁ for a vector', () => {
    const u = Float32Array.of(3, -1, 2);
    const v = Float32Array.of(0.5, 4, -2, 1);
    const g = Float32Array.from({ length: 12 }, (_, k) => u[Math.floor(k / 4)]! * v[k % 4]!);
    const norm = (x: Float32Array) => Math.hypot(...x);
    const expected = (norm(u) * norm(v) * Math.sqrt(7)) / (l1Norm(u) * l1Norm(v));
    expect(indicatorOf(g, [3, 4])).toBeCloseTo(expected, 10);
    expect(indicatorOf(v, [1, 4])).toBeCloseTo((norm(v) * Math.sqrt(5)) / l1Norm(v), 12);
    expect(spectralIndicator(1, new Float32Array(4), [2, 2])).toBeNull();
  });

  it('lies in [√((m+n)/(mn)), √(m+n)], reached by the constant matrix and by the identity', () => {
    const ones = new Float32Array(6 * 9).fill(0.5);
    expect(indicatorOf(ones, [6, 9])).toBeCloseTo(indicatorRange([6, 9]).min, 10);
    const identity = Float32Array.from({ length: 49 }, (_, k) => (k % 8 === 0 ? 1 : 0));
    expect(indicatorOf(identity, [7, 7])).toBeCloseTo(indicatorRange([7, 7]).max, 10);
    const single = Float32Array.from({ length: 20 }, (_, k) => (k === 13 ? -3 : 0));
    expect(indicatorOf(single, [4, 5])).toBeCloseTo(indicatorRange([4, 5]).max, 10);
    for (const { grad, shape } of [randomGradient(), lowRankGradient(), factoredGradient()]) {
      const value = indicatorOf(grad, shape);
      const { min, max } = indicatorRange(shape);
      expect(value).toBeGreaterThan(min);
      expect(value).toBeLessThan(max);
    }
  });

  it('is the same from a dense layer’s factors as from its matrix', () => {
    const { grad, shape, factors } = factoredGradient();
    const fromFactors = nuclearNorm(grad, shape, factors);
    const fromMatrix = nuclearNorm(grad, shape);
    // Both routes keep the singular values above 10⁻⁶·‖G‖_F; grad is float32(XᵀΔ), so they agree to float32
    // rounding.
    expect(Math.abs(fromFactors - fromMatrix)).toBeLessThan(1e-5 * fromMatrix);
  });

  it('says which decomposition has the lower variance at equal numbers sent: spectral below 1, entries above', () => {
    const shape: Shape = [40, 24];
    const [m, n] = shape;
    let below = 0;
    let above = 0;
    for (let seed = 0; seed < 12; seed++) {
      // Rank 2 to full rank: the indicator ranges from well below to well above 1.
      const rank = [1, 2, 4, 8, 16, 24][seed % 6]!;
      const grad = Float32Array.from(rank === 24 ? randomMatrix(m, n, seed) : lowRankMatrix(m, n, rank, seed));
      const sigma = spectralDecomposition(grad, shape).coefficients;
      // A budget small enough that no atom saturates on either side (the s-balanced case of docs/design.md).
      const s = 0.2;
      const spectral = atomicVariance(sigma, samplingProbabilities(sigma, s));
      const entries = atomicVariance(grad, samplingProbabilities(grad, s * (m + n)));
      const indicator = indicatorOf(grad, shape);
      // Balanced: V = ‖λ‖₁²/s − ‖g‖², so V_spectral < V_entry ⟺ ‖σ‖₁² < ‖g‖₁²/(m+n) ⟺
      // indicator < 1.
      expect(spectral < entries, `rank ${rank}: indicator ${indicator}`).toBe(indicator < 1);
      if (indicator < 1) below++;
      else above++;
    }
    expect(below).toBeGreaterThan(0);
    expect(above).toBeGreaterThan(0);
  });
});
