/**
 * Spectral ATOMO for the CPU worker, faster on low-rank gradients.
 *
 * A dense layer's minibatch gradient is G = Xᵀ·Δ, so rank(G) ≤ batch size
 * (DESIGN.md §3, "useful fact"); core/atomo's reference decomposition runs
 * Jacobi on all of G (784×128: ~0.4 s a step on the CPU). Here G = Q·R by
 * Gram–Schmidt with column pivoting, which stops at the numerical rank r, and
 * only the small r×n factor R goes through core/linalg's Jacobi SVD:
 *   G = Q R = (Q U_R) Σ V_Rᵀ.
 * The atoms, their order (descending σ) and everything after the
 * decomposition (water-filling, Bernoulli draws, scaling, variance) are
 * core/atomo's own sampleAtoms, so the wire sample means the same thing.
 * Directions whose residual falls below 10⁻⁶‖G‖_F are dropped: float32
 * rounding noise of a rank-r matrix, far below what the float32 atoms carry.
 *
 * This is an adapter until core/atomo grows its own fast spectral path; the
 * worker step takes it through its `schemes` option.
 */
import { SCHEMES, checkGradient, sampleAtoms, type AtomicDecomposition, type Scheme } from '../atomo';
import { DEFAULT_BUDGET } from '../atomo';
import type { SchemeName, Shape, SpectralSample } from '../atomo/types';
import { svdJacobi } from '../linalg/svd';

/** Residual column norms below this fraction of ‖G‖_F end the factorisation. */
const RELATIVE_RANK_TOLERANCE = 1e-6;

/** The thin factors of G: U (rows×k, column-major), σ descending, V (cols×k, column-major). */
interface Factors {
  readonly k: number;
  readonly u: Float64Array;
  readonly sigma: Float64Array;
  readonly v: Float64Array;
}

/** G = Q R with column pivoting; Q is rows×r column-major, R is r×cols row-major (columns in G's order). */
function pivotedQr(grad: Float32Array, rows: number, cols: number): { q: Float64Array; r: Float64Array; rank: number } {
  // Column-major working copy: column j of G at [j·rows, (j+1)·rows).
  const w = new Float64Array(rows * cols);
  let total = 0;
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      const x = grad[i * cols + j]!;
      w[j * rows + i] = x;
      total += x * x;
    }
  }
  const limit = Math.min(rows, cols);
  const q = new Float64Array(rows * limit);
  const rCols: Float64Array[] = []; // row k of R, one per accepted direction
  const residual = new Float64Array(cols);
  const threshold = RELATIVE_RANK_TOLERANCE * RELATIVE_RANK_TOLERANCE * total;
  let rank = 0;
  while (rank < limit) {
    // Pivot: the column with the largest residual norm (recomputed: cheap next to the update, and exact).
    let best = -1;
    let bestNorm = threshold;
    for (let j = 0; j < cols; j++) {
      let s = 0;
      const base = j * rows;
      for (let i = 0; i < rows; i++) s += w[base + i]! * w[base + i]!;
      residual[j] = s;
      if (s > bestNorm) {
        bestNorm = s;
        best = j;
      }
    }
    if (best < 0) break;
    const qk = q.subarray(rank * rows, (rank + 1) * rows);
    const norm = Math.sqrt(bestNorm);
    for (let i = 0; i < rows; i++) qk[i] = w[best * rows + i]! / norm;
    // Re-orthogonalise against the earlier directions (Gram–Schmidt twice is enough).
    for (let p = 0; p < rank; p++) {
      const qp = q.subarray(p * rows, (p + 1) * rows);
      let dot = 0;
      for (let i = 0; i < rows; i++) dot += qp[i]! * qk[i]!;
      for (let i = 0; i < rows; i++) qk[i]! -= dot * qp[i]!;
    }
    let renorm = 0;
    for (let i = 0; i < rows; i++) renorm += qk[i]! * qk[i]!;
    renorm = Math.sqrt(renorm);
    for (let i = 0; i < rows; i++) qk[i]! /= renorm;
    // Row `rank` of R and the residual update, for every column: W ← W − q (qᵀW).
    const rRow = new Float64Array(cols);
    for (let j = 0; j < cols; j++) {
      const base = j * rows;
      let dot = 0;
      for (let i = 0; i < rows; i++) dot += qk[i]! * w[base + i]!;
      rRow[j] = dot;
      for (let i = 0; i < rows; i++) w[base + i]! -= dot * qk[i]!;
    }
    rCols.push(rRow);
    rank++;
  }
  // R so far holds the projections onto each q at the time it was found;
  // since each residual had the earlier directions removed, G = Σₖ qₖ rₖᵀ exactly.
  const r = new Float64Array(rank * cols);
  rCols.forEach((row, k) => r.set(row, k * cols));
  return { q: q.subarray(0, rank * rows), r, rank };
}

/** The thin SVD of G through its pivoted QR. */
function lowRankSvd(grad: Float32Array, rows: number, cols: number): Factors {
  const { q, r, rank } = pivotedQr(grad, rows, cols);
  if (rank === 0) return { k: 0, u: new Float64Array(0), sigma: new Float64Array(0), v: new Float64Array(0) };
  const small = svdJacobi(r, rank, cols); // R = U_R Σ V_Rᵀ, U_R rank×r', V_R cols×r'
  const k = small.rank;
  const width = small.r;
  const u = new Float64Array(rows * k);
  const v = new Float64Array(cols * k);
  for (let a = 0; a < k; a++) {
    // u_a = Q · (column a of U_R)
    const out = u.subarray(a * rows, (a + 1) * rows);
    for (let p = 0; p < rank; p++) {
      const coefficient = small.u[p * width + a]!;
      if (coefficient === 0) continue;
      const qp = q.subarray(p * rows, (p + 1) * rows);
      for (let i = 0; i < rows; i++) out[i]! += coefficient * qp[i]!;
    }
    for (let j = 0; j < cols; j++) v[a * cols + j] = small.v[j * width + a]!;
  }
  return { k, u, sigma: small.singularValues.slice(0, k), v };
}

/** The spectral decomposition of a rows×cols gradient through its pivoted QR (same atoms as core/atomo's). */
export function lowRankSpectralDecomposition(grad: Float32Array, shape: Shape): AtomicDecomposition<SpectralSample> {
  const [rows, cols] = shape;
  const { u, sigma, v } = lowRankSvd(grad, rows, cols);
  return {
    shape,
    coefficients: sigma,
    toSample: (kept, scales) => {
      const count = kept.length;
      const uOut = new Float32Array(count * rows);
      const vOut = new Float32Array(count * cols);
      for (let a = 0; a < count; a++) {
        const atom = kept[a]!;
        uOut.set(u.subarray(atom * rows, (atom + 1) * rows), a * rows);
        vOut.set(v.subarray(atom * cols, (atom + 1) * cols), a * cols);
      }
      return { scheme: 'atomo-svd', shape, count, u: uOut, v: vOut, scales };
    },
  };
}

/** Spectral ATOMO with the low-rank decomposition; budget s = expected atoms sent. */
export const lowRankSvdScheme: Scheme<'atomo-svd'> = {
  name: 'atomo-svd',
  compress(grad, shape, options, stream) {
    checkGradient(grad, shape);
    const { sample, variance } = sampleAtoms(lowRankSpectralDecomposition(grad, shape), options.budget ?? DEFAULT_BUDGET, stream);
    return { sample, variance };
  },
};

/** A scheme registry: core/atomo's, or one with a faster implementation of some scheme. */
export type SchemeRegistry = { readonly [K in SchemeName]: Scheme<K> };

/** core/atomo's schemes with the low-rank spectral decomposition: what CPU workers use. */
export const CPU_WORKER_SCHEMES: SchemeRegistry = { ...SCHEMES, 'atomo-svd': lowRankSvdScheme };
