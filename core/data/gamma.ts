/**
 * Gamma and Dirichlet draws for label-skewed sharding. Dirichlet(α, …, α) is
 * a vector of independent Gamma(α, 1) draws divided by their sum.
 */
import type { DrawSequence } from './random';

/**
 * log of a Gamma(shape, 1) draw. Marsaglia & Tsang, "A simple method for
 * generating gamma variables" (2000): for shape ≥ 1, with d = shape − 1/3 and
 * c = 1/√(9d), draw x ~ N(0,1), v = (1 + cx)³, u ~ U(0,1) and accept d·v when
 * log u < x²/2 + d − d·v + d·log v. For shape < 1, the paper's boost
 * Gamma(a) = Gamma(a + 1) · U^(1/a), kept in log space because U^(1/a)
 * underflows to 0 for the tiny shapes (α = 0.01) that strong skew needs.
 */
export function sampleLogGamma(shape: number, draws: DrawSequence): number {
  if (!(shape > 0) || !Number.isFinite(shape)) throw new RangeError(`Gamma shape must be finite and > 0, got ${shape}`);
  if (shape < 1) {
    return sampleLogGamma(shape + 1, draws) + Math.log(draws.nextUniformPositive()) / shape;
  }
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    const x = draws.nextNormal();
    const base = 1 + c * x;
    if (base <= 0) continue;
    const v = base * base * base;
    const logU = Math.log(draws.nextUniformPositive());
    if (logU < 0.5 * x * x + d - d * v + d * Math.log(v)) return Math.log(d) + Math.log(v);
  }
}

/** A Gamma(shape, 1) draw (see sampleLogGamma). */
export function sampleGamma(shape: number, draws: DrawSequence): number {
  return Math.exp(sampleLogGamma(shape, draws));
}

/**
 * A draw from the symmetric Dirichlet(α, …, α) on `size` components:
 * normalised Gamma(α) draws, normalised with log-sum-exp so that all
 * components underflowing together (tiny α) still yields a valid vector.
 */
export function sampleSymmetricDirichlet(size: number, alpha: number, draws: DrawSequence): Float64Array {
  const logs = new Float64Array(size);
  let largest = -Infinity;
  for (let i = 0; i < size; i++) {
    logs[i] = sampleLogGamma(alpha, draws);
    largest = Math.max(largest, logs[i]!);
  }
  const proportions = new Float64Array(size);
  let total = 0;
  for (let i = 0; i < size; i++) {
    proportions[i] = Math.exp(logs[i]! - largest);
    total += proportions[i]!;
  }
  for (let i = 0; i < size; i++) proportions[i] = proportions[i]! / total;
  return proportions;
}
