/**
 * Spectral atoms (DESIGN.md §3): G = Σᵢ σᵢ uᵢvᵢᵀ, atoms uᵢvᵢᵀ (unit Frobenius
 * norm, orthonormal), λᵢ = σᵢ, indexed by descending σ.
 */
import { svdLowRank } from '../../linalg/lowRankSvd';
import type { SvdResult } from '../../linalg/svd';
import type { Shape, SpectralSample } from '../types';
import type { AtomicDecomposition } from './decomposition';

/** A spectral decomposition, keeping the SVD it came from (for tests and diagnostics). */
export interface SpectralDecomposition extends AtomicDecomposition<SpectralSample> {
  readonly svd: SvdResult;
}

/**
 * The SVD of the rows×cols gradient, through its rank-revealing QR
 * (core/linalg/lowRankSvd.ts): a minibatch gradient has rank ≤ batch size,
 * so this costs a fraction of a full Jacobi SVD. Only directions above
 * float32 noise become atoms (svd.rank of them).
 */
export function spectralDecomposition(grad: Float32Array, shape: Shape): SpectralDecomposition {
  const [rows, cols] = shape;
  const svd = svdLowRank(grad, rows, cols);
  const coefficients = svd.singularValues.slice(0, svd.rank);
  return {
    shape,
    coefficients,
    svd,
    toSample: (kept, scales) => spectralSample(svd, shape, kept, scales),
  };
}

/** Copies the kept singular vectors (columns of U and V) into the atom-major float32 arrays of the wire. */
function spectralSample(svd: SvdResult, shape: Shape, kept: Uint32Array, scales: Float32Array): SpectralSample {
  const [rows, cols] = shape;
  const { r } = svd;
  const count = kept.length;
  const u = new Float32Array(count * rows);
  const v = new Float32Array(count * cols);
  for (let a = 0; a < count; a++) {
    const k = kept[a]!;
    for (let i = 0; i < rows; i++) u[a * rows + i] = svd.u[i * r + k]!;
    for (let j = 0; j < cols; j++) v[a * cols + j] = svd.v[j * r + k]!;
  }
  return { scheme: 'atomo-svd', shape, count, u, v, scales };
}
