/**
 * atomo-auto: on gradients that suit each decomposition it picks that one
 * (computed from the closed-form variances at the layer's bytes), names it
 * on the wire, and is unbiased with the chosen decomposition's closed-form
 * variance over 2,000 seeds, as the other schemes in unbiased.test.ts. The
 * plan (decompositions, curves, split) is made once per gradient and drawn
 * from 2,000 times through the codec (encode → decode → reconstruct);
 * estimate() is checked to be exactly that path.
 */
import { describe, expect, it } from 'vitest';
import { dct2 } from '../../linalg/dct';
import { VarianceCurve } from '../byteBudget';
import { drawPlannedLayer, planByBytes } from '../compressByBytes';
import { spectralDecomposition } from '../decompositions/spectral';
import { estimate } from '../estimate';
import {
  dctCoordinateVariance,
  entrywiseCoordinateVariance,
  spectralCoordinateVariance,
} from '../testing/coordinate-variance';
import {
  lowRankGradient,
  randomGradient,
  smoothGradient,
  sparseGradient,
  type TestGradient,
} from '../testing/gradients';
import { biasedCoordinates, monteCarlo } from '../testing/monte-carlo';
import { DECOMPOSITIONS, type Decomposition } from '../types';
import { samplingProbabilities } from '../waterfilling';
import { decodeLayer, encodeForWire, encodeLayer } from '../../codec';
import { reconstruct } from '../reconstruct';

const TRIALS = 2000;
// As in unbiased.test.ts: 5 exact standard errors per coordinate, float32 rounding of what is sent below
// 1e-6·‖g‖∞.
const SIGMAS = 5;
const ROUNDING = 1e-6;
const streamOf = (seed: number) => ({ seed, worker: 0, round: 0, layer: 0 });
const maxAbs = (g: Float32Array) => g.reduce((m, x) => Math.max(m, Math.abs(x)), 0);

/** Exact per-coordinate variance of ATOMO on `decomposition` at budget s. */
function coordinateVariance(decomposition: Decomposition, { grad, shape }: TestGradient, budget: number): Float64Array {
  switch (decomposition) {
    case 'entry':
      return entrywiseCoordinateVariance(grad, samplingProbabilities(grad, budget));
    case 'dct': {
      const coefficients = dct2(grad, shape[0], shape[1]);
      return dctCoordinateVariance(coefficients, samplingProbabilities(coefficients, budget), shape[0], shape[1]);
    }
    case 'spectral': {
      const d = spectralDecomposition(grad, shape);
      return spectralCoordinateVariance(d, samplingProbabilities(d.coefficients, budget));
    }
  }
}

describe.each<{ gradient: TestGradient; bytes: number; expected: Decomposition }>([
  // 30 entries of 2,048: about 20 entries fit in 60 bytes, but any spectral or DCT atom spreads over every entry.
  { gradient: sparseGradient(), bytes: 60, expected: 'entry' },
  // Rank 3 and dense: 600 bytes buy 1.5 spectral atoms (97 floats each) against ~400 of 2,048 entries.
  { gradient: lowRankGradient(), bytes: 600, expected: 'spectral' },
  // Twelve cosine atoms of rank up to 8: 50 bytes buy about 8 DCT coefficients, under one spectral atom.
  { gradient: smoothGradient(), bytes: 50, expected: 'dct' },
])('atomo-auto on the $gradient.name gradient at $bytes bytes', ({ gradient, bytes, expected }) => {
  const { grad, shape } = gradient;
  const planned = planByBytes('atomo-auto', [{ grad, shape }], bytes);
  const plan = planned.plans[0]!;
  /** One draw as the aggregator sees it: decoded from the bytes sent. */
  const draw = (seed: number) =>
    reconstruct(decodeLayer(encodeForWire(drawPlannedLayer(planned, 0, streamOf(seed)).sample, 0)).sample);

  it(`picks ${expected} atoms: the lowest closed-form variance of the three at these bytes`, () => {
    expect(plan.option).toBe(expected);
    // Within one saturation step: an atom reaching p = 1 adds its own 4-byte value at once.
    expect(Math.abs(plan.point.bytes - bytes)).toBeLessThanOrEqual(4);
    // Every other decomposition, given the same expected bytes, would have more variance (the choice is computed, not a
    // rule).
    for (const other of DECOMPOSITIONS.filter((d) => d !== expected)) {
      const coefficients =
        other === 'entry'
          ? grad
          : other === 'dct'
            ? dct2(grad, shape[0], shape[1])
            : spectralDecomposition(grad, shape).coefficients;
      const curve = new VarianceCurve(other, shape, coefficients);
      curve.refine(curve.tauForBytes(bytes));
      expect(curve.point(curve.tauForBytes(bytes)).variance, other).toBeGreaterThan(plan.point.variance);
    }
    // The message says which decomposition it carries.
    const decoded = decodeLayer(encodeLayer(drawPlannedLayer(planned, 0, streamOf(1)).sample, 0)).sample;
    expect(decoded.scheme).toBe('atomo-auto');
    if (decoded.scheme === 'atomo-auto')
      expect(decoded.atoms.scheme).toBe({ entry: 'atomo-entry', spectral: 'atomo-svd', dct: 'atomo-dct' }[expected]);
  });

  it('is unbiased, and the realised error matches the chosen decomposition’s Σλ²(1/p − 1)', () => {
    const variance = drawPlannedLayer(planned, 0, streamOf(0)).variance;
    const summary = monteCarlo(grad, TRIALS, draw);
    expect(variance).toBeCloseTo(plan.point.variance, 6);
    expect(variance).toBeGreaterThan(0);
    const perCoordinate = coordinateVariance(expected, gradient, plan.point.budget);
    const total = perCoordinate.reduce((a, b) => a + b, 0);
    // The coordinates add up to the closed form (to the SVD's ~1e-13 for spectral atoms).
    expect(Math.abs(total - variance)).toBeLessThanOrEqual(1e-9 * Math.max(variance, 1));
    const failures = biasedCoordinates(grad, summary, perCoordinate, SIGMAS, ROUNDING * maxAbs(grad));
    expect(failures.slice(0, 5)).toEqual([]);
    expect(Math.abs(summary.meanError - variance)).toBeLessThanOrEqual(
      SIGMAS * summary.meanErrorStandardError + 1e-9 * Math.max(variance, 1),
    );
  });

  it('estimate() is exactly that path: the same estimate, variance and bytes', () => {
    for (const seed of [0, 1, 2]) {
      const viaEstimate = estimate('atomo-auto', grad, shape, { byteBudget: bytes, seed });
      const layer = drawPlannedLayer(planned, 0, streamOf(seed));
      expect(viaEstimate.estimate).toEqual(draw(seed));
      expect(viaEstimate.variance).toBe(layer.variance);
      expect(viaEstimate.bytes).toBe(encodeLayer(layer.sample, 0).length);
    }
  });
});

describe('atomo-auto, deterministic cases', () => {
  it('needs a byte budget', () => {
    const { grad, shape } = lowRankGradient();
    expect(() => estimate('atomo-auto', grad, shape, { seed: 1 })).toThrow(/byte budget/);
  });

  it(
    'sends a layer exactly once its bytes allow: the 30 entries of ' +
      'a sparse one, a dense one as float32; a zero gradient as nothing',
    () => {
      const { grad, shape } = sparseGradient();
      const dense = 12 + 4 * shape[0] * shape[1];
      const sparse = estimate('atomo-auto', grad, shape, { byteBudget: dense, seed: 1 });
      expect(sparse.variance).toBe(0);
      // 30 saturated entries: their gaps, codes and own values, far below float32.
      expect(sparse.bytes).toBeLessThan(200);
      expect(Array.from(sparse.estimate)).toEqual(Array.from(grad));
      const full = randomGradient();
      const exact = estimate('atomo-auto', full.grad, full.shape, { byteBudget: dense, seed: 1 });
      expect(exact.variance).toBe(0);
      expect(exact.bytes).toBe(dense);
      expect(Array.from(exact.estimate)).toEqual(Array.from(full.grad));
      const zero = estimate('atomo-auto', new Float32Array(12), [3, 4], { byteBudget: 40, seed: 1 });
      expect(zero.variance).toBe(0);
      expect(Array.from(zero.estimate)).toEqual(new Array(12).fill(0));
    },
  );
});
