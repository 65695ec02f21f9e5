import { describe, expect, it } from 'vitest';
import { bernoulli, randomBits, type StreamId } from '../../rng';
import { terngradScheme } from './terngrad';

const stream: StreamId = { seed: 4, worker: 2, round: 9, layer: 3 };

describe('terngrad scheme', () => {
  it('keeps the largest entry always, draws the others from randomBits(stream, i) with p = |gᵢ|/‖g‖∞', () => {
    const grad = Float32Array.of(0.5, -2, 0, 1, -0.25);
    for (let seed = 0; seed < 30; seed++) {
      const s = { ...stream, seed };
      const { sample, variance } = terngradScheme.compress(grad, [5, 1], {}, s);
      expect(sample.scaler).toBe(2);
      const expected = Array.from(grad, (g, i) => {
        const p = Math.abs(g) / 2;
        if (p === 0) return 0;
        return p >= 1 || bernoulli(randomBits(s, i), p) ? Math.sign(g) : 0;
      });
      expect(Array.from(sample.ternary)).toEqual(expected);
      // Σ|gᵢ|(‖g‖∞ − |gᵢ|) = 0.5·1.5 + 0 + 0 + 1·1 + 0.25·1.75
      expect(variance).toBeCloseTo(0.75 + 1 + 0.4375, 12);
    }
  });

  it('handles a zero gradient', () => {
    const { sample, variance } = terngradScheme.compress(new Float32Array(3), [3, 1], {}, stream);
    expect(sample.scaler).toBe(0);
    expect(Array.from(sample.ternary)).toEqual([0, 0, 0]);
    expect(variance).toBe(0);
  });
});
