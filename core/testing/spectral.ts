/**
 * Checks of singular triplets in spectral ATOMO's atom-major layout (uₜ at
 * u[t·rows …], vₜ at v[t·cols …], core/atomo/types.ts SpectralSample), for
 * the tests of every route that produces them (the GPU SVD, the factored
 * route on the device). Float64 throughout.
 */

/** Σₜ σₜ uₜ vₜᵀ over the first k triplets, row-major rows×cols. */
export function fromTriplets(
  u: ArrayLike<number>,
  sigma: ArrayLike<number>,
  v: ArrayLike<number>,
  rows: number,
  cols: number,
  k: number,
): Float64Array {
  const out = new Float64Array(rows * cols);
  for (let t = 0; t < k; t++) {
    const s = sigma[t]!;
    if (s === 0) continue;
    for (let i = 0; i < rows; i++) {
      const us = u[t * rows + i]! * s;
      for (let j = 0; j < cols; j++) out[i * cols + j]! += us * v[t * cols + j]!;
    }
  }
  return out;
}

/** ‖x − reference‖_F / ‖reference‖_F; the plain ‖x‖_F when the reference is zero. */
export function relativeFrobeniusError(x: ArrayLike<number>, reference: ArrayLike<number>): number {
  let err = 0;
  let norm = 0;
  for (let i = 0; i < reference.length; i++) {
    err += (x[i]! - reference[i]!) ** 2;
    norm += reference[i]! ** 2;
  }
  return norm === 0 ? Math.sqrt(err) : Math.sqrt(err / norm);
}

/** max |XᵀX − I| over the first `count` vectors of length `length`, stored one after another. */
export function orthonormalityError(x: ArrayLike<number>, length: number, count: number): number {
  let worst = 0;
  for (let p = 0; p < count; p++) {
    for (let q = p; q < count; q++) {
      let dot = 0;
      for (let i = 0; i < length; i++) dot += x[p * length + i]! * x[q * length + i]!;
      worst = Math.max(worst, Math.abs(dot - (p === q ? 1 : 0)));
    }
  }
  return worst;
}
