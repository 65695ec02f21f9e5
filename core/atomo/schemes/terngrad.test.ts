import { describe, expect, it } from 'vitest';
import { bernoulli, randomBits, type StreamId } from '../../rng';
import { TERNGRAD_PAPER_CLIP, terngradScheme } from './terngrad';

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

  it('clips to ±c·σ first (σ the entries’ standard deviation): scaler ‖ĉ‖∞, variance Σ s|ĉᵢ| − ĉᵢ²', () => {
    // Mean 1.6, σ = √8.64 ≈ 2.94: c = 1 clips the 10 to σ and leaves the −2.
    const grad = Float32Array.of(1, 1, 1, 1, 1, 1, 1, 1, 10, -2);
    const mean = grad.reduce((a, b) => a + b, 0) / grad.length;
    const sigma = Math.sqrt(grad.reduce((a, b) => a + (b - mean) ** 2, 0) / grad.length);
    const threshold = Math.fround(sigma);
    expect(threshold).toBeLessThan(10);
    expect(threshold).toBeGreaterThan(2);
    for (let seed = 0; seed < 30; seed++) {
      const s = { ...stream, seed };
      const { sample, variance } = terngradScheme.compress(grad, [10, 1], { terngradClip: 1 }, s);
      const clipped = Array.from(grad, (g) => Math.max(-threshold, Math.min(threshold, g)));
      expect(sample.scaler).toBe(threshold);
      expect(sample.ternary[8]).toBe(1); // clipped to the scaler itself: p = 1
      const expected = clipped.map((c, i) => {
        const p = Math.abs(c) / threshold;
        return p >= 1 || bernoulli(randomBits(s, i), p) ? Math.sign(c) : 0;
      });
      expect(Array.from(sample.ternary)).toEqual(expected);
      const closedForm = clipped.reduce((sum, c) => sum + threshold * Math.abs(c) - c * c, 0);
      expect(variance).toBeCloseTo(closedForm, 10);
    }
  });

  it('clips nothing at c = 0, when no entry exceeds c·σ, or when σ = 0 (every entry equal)', () => {
    const grad = Float32Array.of(0.5, -2, 0, 1, -0.25);
    const plain = terngradScheme.compress(grad, [5, 1], {}, stream);
    expect(terngradScheme.compress(grad, [5, 1], { terngradClip: 0 }, stream)).toEqual(plain);
    // σ = √1.04 ≈ 1.02, so ±2.5σ ≈ ±2.55 holds every entry (the largest is |−2|).
    expect(terngradScheme.compress(grad, [5, 1], { terngradClip: TERNGRAD_PAPER_CLIP }, stream)).toEqual(plain);
    const constant = Float32Array.of(3, 3, 3);
    const { sample } = terngradScheme.compress(constant, [3, 1], { terngradClip: 2.5 }, stream);
    expect(sample.scaler).toBe(3);
    expect(Array.from(sample.ternary)).toEqual([1, 1, 1]);
  });

  it('refuses a negative or non-finite clipping multiple', () => {
    for (const terngradClip of [-1, NaN, Infinity]) {
      expect(() => terngradScheme.compress(Float32Array.of(1), [1, 1], { terngradClip }, stream)).toThrow(/clipping/);
    }
  });
});
