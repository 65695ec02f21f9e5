/**
 * Which atoms suit a layer (docs/design.md, "Which atoms suit a layer"):
 * the indicator ‖G‖_*·√(m + n)/‖g‖₁ of an m × n gradient. Below 1, spectral
 * atoms send it with less variance than entries at equal bytes; above 1,
 * entries do.
 */
import { spectralDecomposition } from './decompositions/spectral';
import type { GradientFactors } from '../linalg/factoredSvd';
import type { Shape } from './types';

/** ‖g‖₁, summed in float64. */
export function l1Norm(grad: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < grad.length; i++) sum += Math.abs(grad[i]!);
  return sum;
}

/**
 * ‖G‖_* = Σσᵢ of the rows × cols gradient: ‖g‖₂ for a vector (rank 1), else
 * the singular values spectral ATOMO computes (from the factors when the
 * layer has them, core/atomo/decompositions/spectral.ts).
 */
export function nuclearNorm(grad: Float32Array, shape: Shape, factors?: GradientFactors): number {
  if (shape[0] === 1 || shape[1] === 1) {
    let sum = 0;
    for (let i = 0; i < grad.length; i++) sum += grad[i]! * grad[i]!;
    return Math.sqrt(sum);
  }
  return l1Norm(spectralDecomposition(grad, shape, factors).coefficients);
}

/**
 * ‖G‖_*·√(rows + cols)/‖g‖₁ from a nuclear norm already known; null for a zero gradient, which has no
 * preference.
 */
export function spectralIndicator(nuclear: number, grad: ArrayLike<number>, shape: Shape): number | null {
  return indicatorFromNorms(nuclear, l1Norm(grad), shape);
}

/**
 * spectralIndicator from ‖G‖_* and ‖g‖₁ both already known (core/atomo/reconstruct.ts's layerStatistics sums
 * ‖g‖₁ as l1Norm does).
 */
export function indicatorFromNorms(nuclear: number, l1: number, [rows, cols]: Shape): number | null {
  return l1 > 0 ? (nuclear * Math.sqrt(rows + cols)) / l1 : null;
}

/**
 * The range every gradient's indicator lies in, [√((m+n)/(mn)), √(m+n)]:
 * ‖G‖_* ≥ ‖G‖_F ≥ ‖g‖₁/√(mn) (equal for a constant matrix), and ‖G‖_* ≤ ‖g‖₁,
 * since ‖G‖_* = max ⟨G, W⟩ over ‖W‖₂ ≤ 1 and such a W has entries of at most 1
 * (equal for one non-zero entry per row and column: a single entry, the
 * identity). The server refuses a reported indicator outside it (server/protocol/validation.ts).
 */
export function indicatorRange([rows, cols]: Shape): { readonly min: number; readonly max: number } {
  return { min: Math.sqrt((rows + cols) / (rows * cols)), max: Math.sqrt(rows + cols) };
}
