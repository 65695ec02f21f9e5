import { describe, expect, it } from 'vitest';
import { encodedByteLength } from '../codec';
import type { StreamId } from '../rng';
import { estimate } from './estimate';
import { reconstruct } from './reconstruct';
import { DEFAULT_BUDGET, SCHEMES } from './schemes';
import { randomGradient } from './testing/gradients';
import { SCHEME_NAMES } from './types';

const streamOf = (seed: number): StreamId => ({ seed, worker: 0, round: 0, layer: 0 });

describe('estimate', () => {
  const { grad, shape } = randomGradient();
  const n = grad.length;

  for (const scheme of SCHEME_NAMES) {
    it(`${scheme}: is compress → encode → decode → reconstruct on stream {seed, 0, 0, 0}`, () => {
      for (const seed of [0, 9, 123456789]) {
        const options = { budget: 40, levels: 3, byteBudget: 300 };
        const { sample, variance } = SCHEMES[scheme].compress(grad, shape, options, streamOf(seed));
        const result = estimate(scheme, grad, shape, { ...options, seed });
        // The codec carries float32 exactly, so the decoded estimate is bit-identical.
        expect(result.estimate).toEqual(reconstruct(sample));
        expect(result.variance).toBe(variance);
        expect(result.bytes).toBe(encodedByteLength(sample));
      }
    });
  }

  it('uses budget 2 and 1-bit QSGD by default', () => {
    for (const seed of [1, 2]) {
      expect(estimate('atomo-svd', grad, shape, { seed })).toEqual(
        estimate('atomo-svd', grad, shape, { seed, budget: DEFAULT_BUDGET }),
      );
      expect(estimate('atomo-entry', grad, shape, { seed })).toEqual(
        estimate('atomo-entry', grad, shape, { seed, budget: 2 }),
      );
      expect(estimate('qsgd', grad, shape, { seed })).toEqual(estimate('qsgd', grad, shape, { seed, levels: 1 }));
    }
  });

  it('is reproducible per seed and differs across seeds', () => {
    for (const scheme of ['atomo-entry', 'qsgd', 'terngrad'] as const) {
      const a = estimate(scheme, grad, shape, { seed: 5, budget: 100 });
      expect(estimate(scheme, grad, shape, { seed: 5, budget: 100 })).toEqual(a);
      expect(estimate(scheme, grad, shape, { seed: 6, budget: 100 }).estimate).not.toEqual(a.estimate);
    }
  });

  it('counts the bytes of the wire format (dense: 12-byte header + 4 per entry)', () => {
    expect(estimate('none', grad, shape, { seed: 0 }).bytes).toBe(12 + 4 * n);
    // Compression is real at these settings: TernGrad ~2 bits and 1-bit QSGD ~2 bits per entry.
    expect(estimate('terngrad', grad, shape, { seed: 0 }).bytes).toBeLessThan(n);
    expect(estimate('qsgd', grad, shape, { seed: 0 }).bytes).toBeLessThan(n);
    expect(estimate('atomo-svd', grad, shape, { seed: 0, budget: 2 }).bytes).toBeLessThan(4 * n);
  });

  it('rejects bad inputs with RangeError', () => {
    expect(() => estimate('qsgd', grad, [10, 10], { seed: 0 })).toThrow(RangeError);
    expect(() => estimate('atomo-entry', grad, shape, { seed: 0, budget: 0 })).toThrow(RangeError);
    expect(() => estimate('qsgd', grad, shape, { seed: 0, levels: 0 })).toThrow(RangeError);
    expect(() => estimate('qsgd', grad, shape, { seed: 0, levels: 2.5 })).toThrow(RangeError);
    expect(() => estimate('qsgd', grad, shape, { seed: 0, levels: 65536 })).toThrow(RangeError);
    const bad = grad.slice();
    bad[5] = Number.NaN;
    for (const scheme of SCHEME_NAMES) expect(() => estimate(scheme, bad, shape, { seed: 0 })).toThrow(RangeError);
  });
});
