/**
 * Spectral atoms: G = Σᵢ σᵢ uᵢvᵢᵀ, atoms uᵢvᵢᵀ (unit Frobenius norm,
 * orthonormal), λᵢ = σᵢ, indexed by descending σ.
 *
 * Two routes to the same SVD, chosen per layer (docs/wire-format.md,
 * "Spectral routes"):
 *  - factored: when the caller hands over the gradient's factors G = Xᵀ·Δ
 *    (a dense layer: its input X and output delta Δ) and the batch is
 *    below min(rows, cols), the SVD comes from QRs of the
 *    factors and a small core (core/linalg/factoredSvd.ts), and only the
 *    singular vectors of the atoms sent are formed;
 *  - direct: otherwise (biases, a conv kernel whose im2col factors are
 *    longer than the kernel, no factors), the SVD of G itself through its
 *    rank-revealing QR (core/linalg/lowRankSvd.ts).
 * Only directions above float32 noise become atoms in either route.
 */
import { factoredSvd, type GradientFactors } from '../../linalg/factoredSvd';
import { svdLowRank } from '../../linalg/lowRankSvd';
import type { SvdResult } from '../../linalg/svd';
import type { Shape, SpectralSample } from '../types';
import type { AtomicDecomposition } from './decomposition';

/** Which way a spectral decomposition was computed. */
export type SpectralRoute = 'direct' | 'factored';

/** A spectral decomposition, with the SVD it came from (for tests and diagnostics; formed on first use in the factored route). */
export interface SpectralDecomposition extends AtomicDecomposition<SpectralSample> {
  readonly route: SpectralRoute;
  readonly svd: SvdResult;
}

/** The route a rows×cols layer takes given factors of batch size `batch` (or none). */
export function spectralRoute(shape: Shape, batch: number | undefined): SpectralRoute {
  return batch !== undefined && batch < Math.min(shape[0], shape[1]) ? 'factored' : 'direct';
}

/**
 * The SVD atoms of the rows×cols gradient `grad` (row-major). With `factors`
 * (grad = Xᵀ·Δ up to float32 rounding) a low-rank layer takes the
 * factored route; the atoms then decompose Xᵀ·Δ exactly.
 */
export function spectralDecomposition(grad: Float32Array, shape: Shape, factors?: GradientFactors): SpectralDecomposition {
  const [rows, cols] = shape;
  if (factors !== undefined && spectralRoute(shape, factors.batch) === 'factored') {
    const f = factoredSvd(factors, rows, cols);
    let svd: SvdResult | undefined;
    return {
      shape,
      route: 'factored',
      coefficients: f.singularValues,
      get svd() {
        svd ??= f.materialise();
        return svd;
      },
      toSample: (kept, scales) => {
        const count = kept.length;
        const u = new Float32Array(count * rows);
        const v = new Float32Array(count * cols);
        const colU = new Float64Array(rows);
        const colV = new Float64Array(cols);
        for (let a = 0; a < count; a++) {
          u.set(f.leftVector(kept[a]!, colU), a * rows);
          v.set(f.rightVector(kept[a]!, colV), a * cols);
        }
        return { scheme: 'atomo-svd', shape, count, u, v, scales };
      },
    };
  }
  const svd = svdLowRank(grad, rows, cols);
  return {
    shape,
    route: 'direct',
    coefficients: svd.singularValues.slice(0, svd.rank),
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
