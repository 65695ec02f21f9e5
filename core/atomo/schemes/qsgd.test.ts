import { describe, expect, it } from 'vitest';
import type { StreamId } from '../../rng';
import { reconstruct } from '../reconstruct';
import { qsgdScheme } from './qsgd';

const stream: StreamId = { seed: 1, worker: 0, round: 0, layer: 0 };

describe('qsgd scheme', () => {
  it('is exact with zero variance when every s|gᵢ|/‖g‖ is an integer', () => {
    // ‖g‖ = 5 (3-4-5), s = 5: positions 3, 4 and 0.
    const grad = Float32Array.of(3, -4, 0);
    const { sample, variance } = qsgdScheme.compress(grad, [1, 3], { levels: 5 }, stream);
    expect(variance).toBe(0);
    expect(sample.norms[0]).toBe(5);
    expect(Array.from(sample.level)).toEqual([3, 4, 0]);
    expect(Array.from(sample.negative)).toEqual([0, 1, 0]);
    expect(Array.from(reconstruct(sample))).toEqual([3, -4, 0]);
  });

  it('rounds between adjacent levels only, with the closed-form variance', () => {
    const grad = Float32Array.of(1, 2, -2, 4); // ‖g‖ = 5
    for (let seed = 0; seed < 50; seed++) {
      const { sample, variance } = qsgdScheme.compress(grad, [2, 2], { levels: 2 }, { ...stream, seed });
      // positions s|g|/‖g‖ = 0.4, 0.8, 0.8, 1.6
      expect(sample.level[0]! <= 1 && sample.level[1]! <= 1 && sample.level[2]! <= 1).toBe(true);
      expect([1, 2]).toContain(sample.level[3]);
      // (‖g‖/s)² Σ f(1 − f) = 6.25·(0.24 + 0.16 + 0.16 + 0.24)
      expect(variance).toBeCloseTo(6.25 * 0.8, 12);
    }
  });

  it('handles a zero gradient: norm 0, all levels 0, variance 0', () => {
    const { sample, variance } = qsgdScheme.compress(new Float32Array(4), [2, 2], { levels: 3 }, stream);
    expect(sample.norms[0]).toBe(0);
    expect(Array.from(sample.level)).toEqual([0, 0, 0, 0]);
    expect(variance).toBe(0);
  });

  it('sends the norm as float32 and uses it for the levels (so a single entry is exact)', () => {
    const grad = Float32Array.of(0, 0.1, 0);
    const { sample, variance } = qsgdScheme.compress(grad, [3, 1], { levels: 7 }, stream);
    expect(sample.norms[0]).toBe(Math.fround(0.1));
    expect(Array.from(sample.level)).toEqual([0, 7, 0]);
    expect(variance).toBe(0);
  });
});

describe('bucketed qsgd', () => {
  it('scales each bucket by its own norm, with a short last bucket', () => {
    // Buckets of 2: (3, −4) has norm 5, (0.5) has norm 0.5; s = 5 makes every position an integer.
    const grad = Float32Array.of(3, -4, 0.5);
    const { sample, variance } = qsgdScheme.compress(grad, [1, 3], { levels: 5, bucketSize: 2 }, stream);
    expect(Array.from(sample.norms)).toEqual([5, 0.5]);
    expect(Array.from(sample.level)).toEqual([3, 4, 5]);
    expect(variance).toBe(0);
    expect(Array.from(reconstruct(sample))).toEqual([3, -4, 0.5]);
  });

  it('reports Σ_k (‖g_k‖/s)² Σ f(1 − f) per bucket, less than one bucket over the layer when scales differ', () => {
    const grad = Float32Array.of(1, 1, 1, 1, 0.01, 0.02, 0.01, 0.03); // two buckets of 4 at very different scales
    const one = qsgdScheme.compress(grad, [2, 4], { levels: 3 }, stream).variance;
    const bucketed = qsgdScheme.compress(grad, [2, 4], { levels: 3, bucketSize: 4 }, stream).variance;
    // Bucket 1: positions 3·1/2 = 1.5 → f(1−f) = 0.25 each, (2/3)²·4·0.25.
    const tail = grad.subarray(4);
    const n2 = Math.fround(Math.sqrt(tail.reduce((sum, g) => sum + g * g, 0)));
    let second = 0;
    for (const g of tail) {
      const p = (3 * g) / n2;
      const f = p - Math.floor(p);
      second += (n2 / 3) ** 2 * f * (1 - f);
    }
    expect(bucketed).toBeCloseTo((2 / 3) ** 2 + second, 12);
    expect(bucketed).toBeLessThan(one);
  });

  it('refuses a negative or fractional bucket size', () => {
    expect(() => qsgdScheme.compress(Float32Array.of(1), [1, 1], { levels: 3, bucketSize: -1 }, stream)).toThrow(
      /bucket size/,
    );
    expect(() => qsgdScheme.compress(Float32Array.of(1), [1, 1], { levels: 3, bucketSize: 1.5 }, stream)).toThrow(
      /bucket size/,
    );
  });
});
