/** What the SVD tests check of a result, shared by the reference's tests and those of the routes tested against it. */
import type { SvdResult } from '../svd';

function frobenius(a: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! ** 2;
  return Math.sqrt(sum);
}

/** ‖U Σ Vᵀ − A‖_F / max(‖A‖_F, tiny). */
export function reconstructionError(a: ArrayLike<number>, svd: SvdResult): number {
  const { rows, cols, r, u, v, singularValues } = svd;
  let err = 0;
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      let sum = 0;
      for (let k = 0; k < r; k++) sum += u[i * r + k]! * singularValues[k]! * v[j * r + k]!;
      err += (sum - a[i * cols + j]!) ** 2;
    }
  }
  return Math.sqrt(err) / Math.max(frobenius(a), Number.MIN_VALUE);
}

/** max |XᵀX − diag(1 for k < rank, 0 after)| for X stored len×r row-major. */
export function orthogonalityError(x: Float64Array, len: number, r: number, rank: number): number {
  let worst = 0;
  for (let p = 0; p < r; p++) {
    for (let q = 0; q < r; q++) {
      let dot = 0;
      for (let i = 0; i < len; i++) dot += x[i * r + p]! * x[i * r + q]!;
      const expected = p === q && p < rank ? 1 : 0;
      worst = Math.max(worst, Math.abs(dot - expected));
    }
  }
  return worst;
}
