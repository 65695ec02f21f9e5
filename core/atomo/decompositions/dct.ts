/**
 * Fourier atoms (the paper's third example; docs/design.md): the orthonormal
 * 2-D DCT-II, G = Σₖₗ C[k, l] d_k d_lᵀ with C = D_m G D_nᵀ
 * (core/linalg/dct.ts). The atoms d_k d_lᵀ are orthonormal, so the
 * closed-form variance Σλ²(1/p − 1) is exact. Atom i = k·cols + l.
 */
import { dct2 } from '../../linalg/dct';
import type { DctSample, Shape } from '../types';
import type { AtomicDecomposition } from './decomposition';

/** λ = the DCT coefficients, row-major; the wire sample is (index, λᵢ/pᵢ) pairs like entry-wise ATOMO. */
export function dctDecomposition(grad: Float32Array, shape: Shape): AtomicDecomposition<DctSample> {
  const [rows, cols] = shape;
  return dctAtoms(dct2(grad, rows, cols), shape);
}

/**
 * The decomposition of a gradient whose DCT coefficients (row-major, atom i = k·cols + l) were computed elsewhere,
 * e.g. on the GPU.
 */
export function dctAtoms(coefficients: Float64Array, shape: Shape): AtomicDecomposition<DctSample> {
  return {
    shape,
    coefficients,
    toSample: (kept, scales) => ({ scheme: 'atomo-dct', shape, indices: kept, values: scales }),
  };
}
