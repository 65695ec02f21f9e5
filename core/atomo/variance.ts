/**
 * Variance of the unbiased estimators, closed form and realised, per layer
 * and summed over a model: what the tab, the dashboard and the swarm's
 * history show each round (docs/design.md, "Variance").
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

/**
 * ‖ĝ − g‖² of one draw of ĝ = Σ_kept scaleₖ aₖ with orthonormal atoms, from
 * the coefficients alone: Σ_kept (scaleₖ − λₖ)² + Σ_not kept λᵢ² + residual,
 * where `kept` are the strictly increasing atom indices drawn, `scales` the
 * float32 values sent for them, and `residual` ≥ 0 the part of ‖g‖² outside
 * the atoms (directions a decomposition cut off). Equal to realisedError of
 * the reconstruction up to the float32 rounding of the atoms on the wire.
 */
export function atomicRealisedError(
  coefficients: ArrayLike<number>,
  kept: ArrayLike<number>,
  scales: ArrayLike<number>,
  residual = 0,
): number {
  if (kept.length !== scales.length)
    throw new RangeError(`atomicRealisedError: ${kept.length} atoms kept, ${scales.length} scales`);
  let error = residual;
  let next = 0;
  for (let i = 0; i < coefficients.length; i++) {
    const lambda = coefficients[i]!;
    const d = next < kept.length && kept[next] === i ? scales[next++]! - lambda : lambda;
    error += d * d;
  }
  if (next !== kept.length)
    throw new RangeError(`atomicRealisedError: kept atoms must be increasing indices below ${coefficients.length}`);
  return error;
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

/** One layer's variance statistics, as a worker reports them (core/protocol's LayerStats). */
export interface VarianceStats {
  readonly closedForm: number;
  readonly realised: number;
  readonly gradientNormSq: number;
}

/** The model's variance: each statistic summed over its layers. */
export interface ModelVariance extends VarianceStats {
  /** Σ closed form / Σ‖g‖², and Σ realised / Σ‖g‖² (0 for a zero gradient, whose estimate is exact). */
  readonly closedRel: number;
  readonly realisedRel: number;
}

/** Sums the per-layer statistics of one gradient, and divides the variances by its squared norm. */
export function modelVariance(layers: readonly VarianceStats[]): ModelVariance {
  let closedForm = 0;
  let realised = 0;
  let gradientNormSq = 0;
  for (const layer of layers) {
    closedForm += layer.closedForm;
    realised += layer.realised;
    gradientNormSq += layer.gradientNormSq;
  }
  const relative = (variance: number): number => (gradientNormSq > 0 ? variance / gradientNormSq : 0);
  return { closedForm, realised, gradientNormSq, closedRel: relative(closedForm), realisedRel: relative(realised) };
}

/** modelVariance of a compressed update (the server's `atomo` downlink), relative to the update's own Σ‖u‖². */
export function updateVariance(
  layers: readonly { readonly closedForm: number; readonly realised: number; readonly updateNormSq: number }[],
): ModelVariance {
  return modelVariance(
    layers.map((l) => ({ closedForm: l.closedForm, realised: l.realised, gradientNormSq: l.updateNormSq })),
  );
}
