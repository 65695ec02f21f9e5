import { describe, expect, it } from 'vitest';
import { atomicRealisedError, modelVariance, realisedError } from './variance';

describe('modelVariance', () => {
  it('sums each statistic over the layers and divides the variances by the summed ‖g‖²', () => {
    const total = modelVariance([
      { closedForm: 1, realised: 3, gradientNormSq: 4 },
      { closedForm: 2, realised: 0.5, gradientNormSq: 6 },
    ]);
    expect(total).toEqual({ closedForm: 3, realised: 3.5, gradientNormSq: 10, closedRel: 0.3, realisedRel: 0.35 });
  });

  it('gives 0, not NaN, for a zero gradient (its estimate is exact)', () => {
    expect(modelVariance([{ closedForm: 0, realised: 0, gradientNormSq: 0 }])).toMatchObject({
      closedRel: 0,
      realisedRel: 0,
    });
    expect(modelVariance([])).toMatchObject({ closedRel: 0, realisedRel: 0, gradientNormSq: 0 });
  });
});

describe('atomicRealisedError', () => {
  // Entry-wise atoms (the unit matrices) are orthonormal: ĝ is the kept scales at their indices, 0 elsewhere.
  const g = Float32Array.of(3, -1, 0.5, 2, -4, 0.25);
  const dense = (kept: readonly number[], scales: readonly number[]) => {
    const out = new Float32Array(g.length);
    kept.forEach((k, a) => (out[k] = scales[a]!));
    return out;
  };

  it('is ‖ĝ − g‖²: Σ_kept (scale − λ)² + Σ_dropped λ², plus the residual outside the atoms', () => {
    for (const [kept, scales] of [
      [[], []],
      [
        [0, 3],
        [6, 4],
      ],
      [
        [1, 2, 5],
        [-2, 1, 0.25],
      ],
      [[0, 1, 2, 3, 4, 5], Array.from(g)],
    ] as const) {
      const exact = realisedError(dense(kept, scales), g);
      expect(atomicRealisedError(g, Uint32Array.from(kept), Float32Array.from(scales))).toBeCloseTo(exact, 12);
      expect(atomicRealisedError(g, Uint32Array.from(kept), Float32Array.from(scales), 0.75)).toBeCloseTo(
        exact + 0.75,
        12,
      );
    }
    expect(atomicRealisedError(g, Uint32Array.of(), Float32Array.of())).toBe(realisedError(new Float32Array(6), g));
  });

  it('refuses kept atoms that are not increasing indices of the coefficients, or a scale count that differs', () => {
    expect(() => atomicRealisedError(g, Uint32Array.of(3, 1), Float32Array.of(1, 1))).toThrow(RangeError);
    expect(() => atomicRealisedError(g, Uint32Array.of(2, 2), Float32Array.of(1, 1))).toThrow(RangeError);
    expect(() => atomicRealisedError(g, Uint32Array.of(6), Float32Array.of(1))).toThrow(RangeError);
    expect(() => atomicRealisedError(g, Uint32Array.of(1), Float32Array.of(1, 2))).toThrow(RangeError);
  });
});
