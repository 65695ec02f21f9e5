/**
 * Budgets by bytes: a curve's point is the water-filling's own variance at
 * the budget it implies; its expected bytes are what the codec sends on
 * average (spectral exactly, by enumerating every subset of atoms; entry-wise
 * and DCT within 5 standard errors of 1,500 draws); the split spends the
 * budget, cannot be improved by moving bytes between layers, sends a small
 * layer dense when that is cheapest, and atomo-auto's pick has the lowest
 * variance at the bytes it was given.
 */
import { describe, expect, it } from 'vitest';
import { encodeForWire } from '../codec';
import { expectedGapBytes } from '../codec/sizes';
import { dct2 } from '../linalg/dct';
import { lowRankMatrix, randomMatrix } from '../linalg/random-matrix';
import { seededRng } from '../testing/seeded';
import { splitByteBudget, VarianceCurve, type LayerCurves } from './byteBudget';
import { dctDecomposition } from './decompositions/dct';
import { entrywiseDecomposition } from './decompositions/entrywise';
import { spectralDecomposition } from './decompositions/spectral';
import { sampleAtoms } from './schemes/atomo';
import { lowRankGradient, randomGradient, smoothGradient, sparseGradient } from './testing/gradients';
import type { AtomicDecomposition } from './decompositions/decomposition';
import type { DctSample, Decomposition, EntrySample, Shape } from './types';
import { atomicVariance } from './variance';
import { samplingProbabilities } from './waterfilling';

const streamOf = (seed: number) => ({ seed, worker: 0, round: 0, layer: 0 });

describe('a variance curve', () => {
  it('at water level τ is the water-filling at s = Σ min(1, |λ|/τ): same variance, same saturated atoms', () => {
    const { grad, shape } = randomGradient();
    const curve = new VarianceCurve('entry', shape, grad);
    for (const bytes of [40, 300, 2000, 6000]) {
      const point = curve.point(curve.tauForBytes(bytes));
      const p = samplingProbabilities(grad, point.budget);
      expect(p.reduce((a, b) => a + b, 0)).toBeCloseTo(point.budget, 8);
      expect(point.variance).toBeCloseTo(atomicVariance(grad, p), 8);
      expect(point.saturated).toBe(p.filter((x) => x === 1).length);
    }
    // τ = 0 sends every non-zero atom: no variance.
    expect(curve.point(0)).toMatchObject({ variance: 0, budget: Number.POSITIVE_INFINITY, saturated: 2045 });
  });

  it(
    'prices a spectral layer at E min(empty + a·K, float32), K ' +
      'the Poisson-binomial count: checked over every subset of atoms',
    () => {
      // 8×4 at rank 4: an atom is 52 bytes, float32 140, so three atoms or more go dense (encodeForWire).
      const shape: Shape = [8, 4];
      const grad = Float32Array.from(randomMatrix(8, 4, 3));
      const decomposition = spectralDecomposition(grad, shape);
      const curve = new VarianceCurve('spectral', shape, decomposition.coefficients);
      for (const bytes of [30, 80, 120]) {
        const point = curve.point(curve.tauForBytes(bytes));
        const p = samplingProbabilities(decomposition.coefficients, point.budget);
        let expected = 0;
        for (let subset = 0; subset < 1 << p.length; subset++) {
          let probability = 1;
          let kept = 0;
          p.forEach((pi, i) => {
            const in_ = (subset >> i) & 1;
            probability *= in_ ? pi : 1 - pi;
            kept += in_;
          });
          expected += probability * Math.min(12 + 4 * 32, 12 + 4 + 52 * kept);
        }
        expect(point.bytes).toBeCloseTo(expected, 9);
        expect(point.bytes).toBeCloseTo(bytes, 6);
      }
    },
  );

  it(
    'prices entry-wise and DCT layers at what the codec sends on ' +
      'average: within 5 SE of 1,500 draws, plus ⌈count/4⌉’s 3/8 byte',
    () => {
      const cases: [Decomposition, ReturnType<typeof randomGradient>][] = [
        ['entry', randomGradient()],
        ['entry', sparseGradient()],
        ['dct', lowRankGradient()],
      ];
      for (const [family, { grad, shape }] of cases) {
        const decomposition: AtomicDecomposition<EntrySample | DctSample> =
          family === 'entry' ? entrywiseDecomposition(grad, shape) : dctDecomposition(grad, shape);
        const curve = new VarianceCurve(family, shape, decomposition.coefficients);
        for (const target of [60, 700]) {
          const tau = curve.tauForBytes(target);
          curve.refine(tau);
          const point = curve.point(tau);
          let sum = 0;
          let sumSquares = 0;
          const draws = 1500;
          for (let seed = 0; seed < draws; seed++) {
            const bytes = encodeForWire(sampleAtoms(decomposition, point.budget, streamOf(seed)).sample, 0).length;
            sum += bytes;
            sumSquares += bytes * bytes;
          }
          const mean = sum / draws;
          const standardError = Math.sqrt((sumSquares / draws - mean * mean) / draws);
          expect(Math.abs(mean - point.bytes), `${family} ${target}`).toBeLessThanOrEqual(
            5 * standardError + 3 / 8 + 1e-9,
          );
        }
      }
    },
  );

  it('has expectedGapBytes equal to the varint bytes of the gaps, in expectation (against 20,000 draws)', () => {
    // Runs of p = 0 longer than 2⁷ and 2¹⁴ (two- and three-byte gaps), saturated atoms, and small p.
    const p = new Float64Array(40_000);
    for (let i = 0; i < p.length; i++) p[i] = i < 20_000 ? 0 : i % 997 === 0 ? 1 : i % 3 === 0 ? 0.002 : 0;
    p[5] = 0.5;
    p[300] = 0.3;
    const rng = seededRng(17);
    let total = 0;
    let totalSquares = 0;
    const draws = 20_000;
    const kept = Array.from(p.keys()).filter((i) => p[i]! > 0);
    for (let d = 0; d < draws; d++) {
      let previous = -1;
      let bytes = 0;
      for (const i of kept) {
        if (rng() >= p[i]!) continue;
        const gap = i - previous - 1;
        bytes += gap < 0x80 ? 1 : gap < 0x4000 ? 2 : 3;
        previous = i;
      }
      total += bytes;
      totalSquares += bytes * bytes;
    }
    const mean = total / draws;
    const standardError = Math.sqrt((totalSquares / draws - mean * mean) / draws);
    expect(Math.abs(expectedGapBytes(p) - mean)).toBeLessThanOrEqual(5 * standardError);
  });
});

/** The summed variance of a split. */
const totalVariance = (plans: ReturnType<typeof splitByteBudget>) =>
  plans.reduce((sum, p) => sum + p.point.variance, 0);

describe('splitting a byte budget across layers', () => {
  const layers = (): LayerCurves[] => {
    const wide = Float32Array.from(lowRankMatrix(60, 40, 4, 1));
    const tall = Float32Array.from(randomMatrix(30, 10, 2));
    // A bias whose gradient is large for its size, as biases' are: cheap to send exactly.
    const bias = Float32Array.from(randomMatrix(1, 12, 3), (x) => 10 * x);
    return [
      {
        shape: [60, 40],
        curves: [new VarianceCurve('spectral', [60, 40], spectralDecomposition(wide, [60, 40]).coefficients)],
      },
      { shape: [30, 10], curves: [new VarianceCurve('entry', [30, 10], tall)] },
      { shape: [1, 12], curves: [new VarianceCurve('entry', [1, 12], bias)] },
    ];
  };

  it('spends the budget, and moving bytes from one layer to another never lowers the summed variance', () => {
    for (const budget of [400, 1200, 2000]) {
      const candidates = layers();
      const plans = splitByteBudget(candidates, budget);
      // Spent to within one saturation step (an atom reaching p = 1 adds its 4-byte value at once).
      expect(Math.abs(plans.reduce((sum, p) => sum + p.point.bytes, 0) - budget)).toBeLessThanOrEqual(4);
      expect(plans.some((p) => p.point.variance > 0)).toBe(true);
      const best = totalVariance(plans);
      // Shift 2% of the smaller share between every pair of layers sent on a curve: the variance cannot fall (KKT of
      // the split).
      for (let i = 0; i < plans.length; i++) {
        for (let j = 0; j < plans.length; j++) {
          const from = plans[i]!;
          const to = plans[j]!;
          if (i === j || from.curve === null || to.curve === null) continue;
          const delta = 0.02 * Math.min(from.point.bytes, to.point.bytes);
          const moved = plans.map((p, k) =>
            k === i
              ? p.curve!.point(p.curve!.tauForBytes(p.point.bytes - delta))
              : k === j
                ? p.curve!.point(p.curve!.tauForBytes(p.point.bytes + delta))
                : p.point,
          );
          // The split prices an atom at a constant a bytes between saturations; the spectral count's dense fallback
          // bends that a little (E min(…, float32)), so a move may win back up to 0.1%.
          expect(
            moved.reduce((sum, p) => sum + p.variance, 0),
            `budget ${budget}, ${i} → ${j}`,
          ).toBeGreaterThanOrEqual(best * (1 - 1e-3));
        }
      }
    }
  });

  it(
    'sends a small layer dense once its bytes buy float32, spends what ' +
      'is left on the others, and stops at what sends everything exactly',
    () => {
      const exact = splitByteBudget(layers(), 10_000);
      // Spectral at rank 4 (16 + 4·404 bytes), the 30×10 layer dense (its 300 saturated entries would cost more), the
      // bias dense.
      expect(exact.map((p) => p.option)).toEqual(['spectral', 'dense', 'dense']);
      expect(exact.reduce((sum, p) => sum + p.point.bytes, 0)).toBeCloseTo(1632 + 1212 + 60, 6);
      expect(exact.every((p) => p.point.variance === 0)).toBe(true);
      const plans = splitByteBudget(layers(), 2000);
      // 12 + 48 bytes send the bias exactly while the 30×10 layer is still sampled; its entry-wise message would cost
      // more for the same (zero) variance.
      expect(plans.map((p) => p.option)).toEqual(['spectral', 'entry', 'dense']);
      expect(plans[2]!.point.bytes).toBe(60);
      expect(plans[1]!.point.variance).toBeGreaterThan(0);
      // A tight budget leaves it sampled.
      expect(splitByteBudget(layers(), 300)[2]!.option).toBe('entry');
    },
  );

  it(
    'gives atomo-auto’s layer the decomposition of lowest ' +
      'variance at its bytes, and a tiny budget still something to send',
    () => {
      for (const { grad, shape } of [sparseGradient(), lowRankGradient(), smoothGradient()]) {
        const curves = (['entry', 'spectral', 'dct'] as const).map(
          (d) =>
            new VarianceCurve(
              d,
              shape,
              d === 'entry'
                ? grad
                : d === 'dct'
                  ? dct2(grad, shape[0], shape[1])
                  : spectralDecomposition(grad, shape).coefficients,
            ),
        );
        for (const budget of [50, 600, 3000]) {
          const [plan] = splitByteBudget([{ shape, curves }], budget);
          for (const curve of curves)
            expect(plan!.point.variance).toBeLessThanOrEqual(
              curve.point(curve.tauForBytes(plan!.point.bytes)).variance,
            );
        }
      }
      const [tiny] = splitByteBudget(
        [{ shape: [64, 32], curves: [new VarianceCurve('entry', [64, 32], randomGradient().grad)] }],
        20,
      );
      expect(tiny!.point.budget).toBeGreaterThan(0);
      expect(() => splitByteBudget([], 0)).toThrow(RangeError);
    },
  );
});
