/**
 * Unbiasedness and variance of the entry-wise schemes and Fourier ATOMO, through the public
 * estimate() (compress → encode → decode → reconstruct), 2,000 seeds each.
 * Spectral ATOMO has the same checks in schemes/atomo-svd.test.ts, sampling a
 * decomposition computed once.
 */
import { describe, expect, it } from 'vitest';
import { estimate } from './estimate';
import { DEFAULT_LEVELS } from './schemes';
import type { SchemeName } from './types';
import { dct2 } from '../linalg/dct';
import {
  dctCoordinateVariance,
  entrywiseCoordinateVariance,
  qsgdCoordinateVariance,
  terngradCoordinateVariance,
} from './testing/coordinate-variance';
import { TEST_SHAPE, lowRankGradient, randomGradient, type TestGradient } from './testing/gradients';
import { biasedCoordinates, monteCarlo } from './testing/monte-carlo';
import { samplingProbabilities } from './waterfilling';

const TRIALS = 2000;
// 5 standard errors: under the CLT a coordinate passes with probability
// 1 − 6e-7, so all 2,048 coordinates of a case pass with probability ≈ 0.999,
// while a 2 % bias in the values sent, or QSGD rounding up with probability
// 1 − f instead of f, fails at once (both tried by mutation). The
// standard errors come from the exact per-coordinate variance, not the sample
// variance, so a rarely kept entry (Np ≪ 1) does not get SE = 0.
const SIGMAS = 5;
// float32 rounding of what is sent (2⁻²⁴ relative) and of the Bernoulli
// threshold (2⁻²⁴ in p) move a mean by ≲ 1e-7·‖g‖∞ here; 1e-6·‖g‖∞ is ten
// times that and ~1e-4 of a typical standard error.
const ROUNDING = 1e-6;

interface Case {
  readonly scheme: SchemeName;
  readonly budget?: number;
  readonly levels?: number;
  readonly bucketSize?: number;
  readonly coordinateVariance: (g: Float32Array) => Float64Array;
}

const BUDGET = 256; // an eighth of the 2,048 entries
const cases: Case[] = [
  { scheme: 'none', coordinateVariance: (g) => new Float64Array(g.length) },
  {
    scheme: 'atomo-entry',
    budget: BUDGET,
    coordinateVariance: (g) => entrywiseCoordinateVariance(g, samplingProbabilities(g, BUDGET)),
  },
  { scheme: 'qsgd', levels: 1, coordinateVariance: (g) => qsgdCoordinateVariance(g, 1) },
  { scheme: 'qsgd', levels: 5, coordinateVariance: (g) => qsgdCoordinateVariance(g, 5) },
  // QSGD at its best, as in its paper: 2^b − 1 levels and a norm per bucket of 512 (the last bucket short here: 2,048
  // = 4·512).
  { scheme: 'qsgd', levels: 3, bucketSize: 512, coordinateVariance: (g) => qsgdCoordinateVariance(g, 3, 512) },
  { scheme: 'qsgd', levels: 15, bucketSize: 512, coordinateVariance: (g) => qsgdCoordinateVariance(g, 15, 512) },
  { scheme: 'qsgd', levels: 1, bucketSize: 300, coordinateVariance: (g) => qsgdCoordinateVariance(g, 1, 300) },
  { scheme: 'terngrad', coordinateVariance: terngradCoordinateVariance },
  {
    scheme: 'atomo-dct',
    budget: BUDGET,
    coordinateVariance: (g) => {
      const [rows, cols] = TEST_SHAPE;
      const coefficients = dct2(g, rows, cols);
      return dctCoordinateVariance(coefficients, samplingProbabilities(coefficients, BUDGET), rows, cols);
    },
  },
];

function maxAbs(g: Float32Array): number {
  return g.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
}

describe.each([randomGradient(), lowRankGradient()])('estimate() on the $name gradient', (gradient: TestGradient) => {
  const { grad, shape } = gradient;
  for (const c of cases) {
    const knobs = [
      c.budget ? ` s=${c.budget}` : '',
      c.levels ? ` levels=${c.levels}` : '',
      c.bucketSize ? ` buckets of ${c.bucketSize}` : '',
    ];
    const label = `${c.scheme}${knobs.join('')}`;
    it(`${label}: unbiased, and the realised error matches the closed-form variance`, () => {
      const opts = {
        ...(c.budget === undefined ? {} : { budget: c.budget }),
        levels: c.levels ?? DEFAULT_LEVELS,
        ...(c.bucketSize === undefined ? {} : { bucketSize: c.bucketSize }),
      };
      let variance = Number.NaN;
      const summary = monteCarlo(grad, TRIALS, (seed) => {
        const result = estimate(c.scheme, grad, shape, { ...opts, seed });
        variance = result.variance; // deterministic: it depends on g only
        return result.estimate;
      });
      const coordinateVariance = c.coordinateVariance(grad);
      // The per-coordinate variances add up to the closed form the scheme reports.
      const total = coordinateVariance.reduce((a, b) => a + b, 0);
      expect(Math.abs(total - variance)).toBeLessThanOrEqual(1e-9 * Math.max(variance, 1));

      const failures = biasedCoordinates(grad, summary, coordinateVariance, SIGMAS, ROUNDING * maxAbs(grad));
      expect(failures.slice(0, 5)).toEqual([]);

      // Mean realised error within 5 standard errors of the closed form; the
      // small absolute term is float32 rounding of ĝ (≈ n·(2⁻²⁴‖g‖∞)²).
      expect(Math.abs(summary.meanError - variance)).toBeLessThanOrEqual(
        SIGMAS * summary.meanErrorStandardError + 1e-9 * Math.max(variance, 1),
      );
      if (c.scheme !== 'none') expect(variance).toBeGreaterThan(0);
    });
  }
});
