/**
 * Variance of the unbiased estimators, closed form and realised
 * (DESIGN.md §3: shown live per round and per layer).
 */

/**
 * E‖ĝ − g‖² = Σᵢ λᵢ² (1/pᵢ − 1) for ĝ = Σᵢ (λᵢtᵢ/pᵢ) aᵢ with orthonormal
 * atoms (ATOMO, eq. for the variance in §3). Atoms with p = 0 must have λ = 0.
 */
export function atomicVariance(coefficients: ArrayLike<number>, probabilities: ArrayLike<number>): number {
  if (coefficients.length !== probabilities.length) {
    throw new RangeError(`atomicVariance: ${coefficients.length} coefficients, ${probabilities.length} probabilities`);
  }
  let variance = 0;
  for (let i = 0; i < coefficients.length; i++) {
    const lambda = coefficients[i]!;
    const p = probabilities[i]!;
    if (lambda === 0) continue;
    if (!(p > 0)) throw new RangeError(`atomicVariance: atom ${i} has λ = ${lambda} but p = ${p}`);
    variance += lambda * lambda * (1 / p - 1);
  }
  return variance;
}

/** The realised squared error ‖ĝ − g‖², summed in float64. */
export function realisedError(estimate: ArrayLike<number>, grad: ArrayLike<number>): number {
  if (estimate.length !== grad.length) {
    throw new RangeError(`realisedError: estimate has ${estimate.length} entries, gradient ${grad.length}`);
  }
  let sum = 0;
  for (let i = 0; i < grad.length; i++) {
    const d = estimate[i]! - grad[i]!;
    sum += d * d;
  }
  return sum;
}

/** ‖g‖₂², the denominator of the relative variances on the dashboard. */
export function squaredNorm(grad: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < grad.length; i++) sum += grad[i]! * grad[i]!;
  return sum;
}

/** A variance divided by ‖g‖² (0 for a zero gradient, whose estimate is exact). */
export function relativeVariance(variance: number, grad: ArrayLike<number>): number {
  const norm = squaredNorm(grad);
  return norm > 0 ? variance / norm : 0;
}
