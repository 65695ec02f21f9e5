import { describe, expect, it } from 'vitest';
import { sampleGamma, sampleSymmetricDirichlet } from './gamma';
import { DataStreamTag, DrawSequence } from './random';

const draws = (seed: number) => new DrawSequence({ seed, worker: 0, round: 0, layer: DataStreamTag.shardDirichlet });

describe('sampleGamma (Marsaglia–Tsang)', () => {
  // Gamma(k, 1) has mean k and variance k.
  for (const shape of [0.1, 0.5, 1, 2.5, 30]) {
    it(`has mean and variance ≈ ${shape} for shape ${shape}`, () => {
      const source = draws(Math.round(shape * 100));
      const n = 20000;
      let sum = 0;
      let squares = 0;
      for (let i = 0; i < n; i++) {
        const x = sampleGamma(shape, source);
        expect(x).toBeGreaterThanOrEqual(0);
        sum += x;
        squares += x * x;
      }
      const mean = sum / n;
      const variance = squares / n - mean * mean;
      // Five standard errors of the mean: √(k/n).
      expect(Math.abs(mean - shape)).toBeLessThan(5 * Math.sqrt(shape / n));
      // The sample variance's relative spread is √((2 + 6/k)/n), from the Gamma excess kurtosis 6/k.
      expect(Math.abs(variance / shape - 1)).toBeLessThan(5 * Math.sqrt((2 + 6 / shape) / n));
    });
  }

  it('rejects non-positive shapes', () => {
    expect(() => sampleGamma(0, draws(1))).toThrow(RangeError);
    expect(() => sampleGamma(Number.NaN, draws(1))).toThrow(RangeError);
  });
});

describe('sampleSymmetricDirichlet', () => {
  it('sums to 1 with non-negative components, even for tiny alpha', () => {
    for (const alpha of [0.001, 0.1, 1, 1000]) {
      const p = sampleSymmetricDirichlet(16, alpha, draws(3));
      expect(p.every((x) => x >= 0)).toBe(true);
      expect(p.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    }
  });

  it('concentrates on one component for small alpha and spreads evenly for large alpha', () => {
    const largest = (alpha: number) => Math.max(...sampleSymmetricDirichlet(10, alpha, draws(5)));
    expect(largest(0.01)).toBeGreaterThan(0.9);
    expect(largest(10000)).toBeLessThan(0.11);
  });
});
