/**
 * Monte-Carlo checks of unbiasedness and variance, shared by the scheme
 * tests. Pure TypeScript so GPU tests can reuse it on the GPU sampler.
 */
import { realisedError } from '../variance';

/** Per-coordinate mean of ĝ and the distribution of the realised error ‖ĝ − g‖² over many draws. */
export interface MonteCarloSummary {
  readonly trials: number;
  /** Mean of ĝ over the trials, per coordinate. */
  readonly mean: Float64Array;
  /** Unbiased sample variance of ĝ, per coordinate. */
  readonly sampleVariance: Float64Array;
  /** Mean of ‖ĝ − g‖² over the trials. */
  readonly meanError: number;
  /** Standard error of meanError (sample sd / √trials). */
  readonly meanErrorStandardError: number;
}

/** Runs `draw(trial)` for trial = 0..trials−1 and summarises the estimates against g. */
export function monteCarlo(
  grad: Float32Array,
  trials: number,
  draw: (trial: number) => Float32Array,
): MonteCarloSummary {
  const n = grad.length;
  // Sums of d = ĝ − g rather than of ĝ: no cancellation when the spread is small.
  const sum = new Float64Array(n);
  const sumSquares = new Float64Array(n);
  let errorSum = 0;
  let errorSumSquares = 0;
  for (let t = 0; t < trials; t++) {
    const estimate = draw(t);
    for (let j = 0; j < n; j++) {
      const d = estimate[j]! - grad[j]!;
      sum[j] = sum[j]! + d;
      sumSquares[j] = sumSquares[j]! + d * d;
    }
    const error = realisedError(estimate, grad);
    errorSum += error;
    errorSumSquares += error * error;
  }
  const mean = new Float64Array(n);
  const sampleVariance = new Float64Array(n);
  for (let j = 0; j < n; j++) {
    const meanDeviation = sum[j]! / trials;
    mean[j] = grad[j]! + meanDeviation;
    sampleVariance[j] = Math.max(0, (sumSquares[j]! - trials * meanDeviation * meanDeviation) / (trials - 1));
  }
  const meanError = errorSum / trials;
  const errorVariance = Math.max(0, (errorSumSquares - trials * meanError * meanError) / (trials - 1));
  return { trials, mean, sampleVariance, meanError, meanErrorStandardError: Math.sqrt(errorVariance / trials) };
}

/**
 * Coordinates whose mean is further from g than `sigmas` standard errors
 * (from the exact per-coordinate variance) plus `allowance` (float32
 * rounding of the sent values). A coordinate with zero variance must match
 * to the allowance and must also have zero sample variance.
 */
export function biasedCoordinates(
  grad: Float32Array,
  summary: MonteCarloSummary,
  coordinateVariance: Float64Array,
  sigmas: number,
  allowance: number,
): string[] {
  const failures: string[] = [];
  for (let j = 0; j < grad.length; j++) {
    const standardError = Math.sqrt(coordinateVariance[j]! / summary.trials);
    const deviation = Math.abs(summary.mean[j]! - grad[j]!);
    if (deviation > sigmas * standardError + allowance) {
      failures.push(`coordinate ${j}: mean ${summary.mean[j]} vs g ${grad[j]} (SE ${standardError})`);
    }
    if (coordinateVariance[j] === 0 && summary.sampleVariance[j]! > 0) {
      failures.push(`coordinate ${j}: zero variance expected, sample variance ${summary.sampleVariance[j]}`);
    }
  }
  return failures;
}
