/**
 * The SVD of a gradient through a randomized range finder (Halko, Martinsson
 * and Tropp 2011) warm-started from the previous round's right singular
 * subspace (as PowerSGD reuses its Q), but used only to *find* the SVD:
 * the sketch must capture G's whole range, so the result is the same
 * decomposition as the other routes', not a low-rank approximation.
 *
 * With Ω = [V_prev | p Gaussian columns] (cols × k), Y = G·Ω, Q an
 * orthonormal basis of Y (Householder) and B = QᵀG (k × cols), the part of G
 * outside span(Q) has ‖G − QQᵀG‖²_F = ‖G‖²_F − ‖B‖²_F. If that is at most
 * (LOW_RANK_RELATIVE_TOLERANCE·‖G‖_F)² — what every route leaves out anyway
 * (lowRankSvd.ts) — then G = Q·B to that tolerance, and the atoms are the
 * exact SVD (Q·U_B) Σ V_Bᵀ of Q·B from the small SVD of B, orthonormal, so
 * the ATOMO estimate is unbiased for Q·B with its closed-form variance, and
 * what it leaves out is no more than the other routes leave; otherwise the sketch doubles and
 * tries again, and once it would reach min(rows, cols) columns the caller
 * takes the direct route instead. An approximate subspace is never
 * accepted: dropping (I − QQᵀ)G would bias the ATOMO estimate.
 */
import { applyQ, householderQr } from './householderQr';
import { liftSvd, LOW_RANK_RELATIVE_TOLERANCE } from './lowRankSvd';
import { gaussians } from './random-matrix';
import { svdGramJacobi, type SvdResult } from './svd';

/** Fresh Gaussian columns added to the warm start (the oversampling p). */
export const RANGE_FINDER_OVERSAMPLING = 4;

/** A range-finder SVD and what it tried. */
export interface RangeFinderSvd {
  /** Same layout as svdLowRank's: only the rank triplets above the cut-off, all non-zero. */
  readonly svd: SvdResult;
  /** V of the result, cols × rank column-major: the next round's warm start. */
  readonly subspace: Float64Array;
  /** Columns of the sketch that captured G's range. */
  readonly sketch: number;
  /**
   * ‖(I − QQᵀ)G‖_F (from ‖G‖² − ‖QᵀG‖², so to ~10⁻⁸·‖G‖_F): what the
   * decomposition leaves out, at most LOW_RANK_RELATIVE_TOLERANCE·‖G‖_F. The
   * atoms are the exact SVD of QQᵀG, so each σ is within residual²/(2σ) of G's.
   */
  readonly residual: number;
}

/**
 * The SVD of the row-major rows×cols `a` from a sketch starting at `start`
 * (cols × k₀ column-major, any k₀ ≥ 0, need not be orthonormal), or null
 * when the sketch would need min(rows, cols) columns (no cheaper than the
 * direct route).
 */
export function svdRangeFinder(
  a: Float32Array | Float64Array,
  rows: number,
  cols: number,
  start: Float64Array = new Float64Array(0),
): RangeFinderSvd | null {
  if (!Number.isInteger(rows) || !Number.isInteger(cols) || rows < 1 || cols < 1)
    throw new RangeError(`svdRangeFinder: bad shape ${rows}×${cols}`);
  if (a.length !== rows * cols)
    throw new RangeError(`svdRangeFinder: ${a.length} elements for a ${rows}×${cols} matrix`);
  if (start.length % cols !== 0)
    throw new RangeError(`svdRangeFinder: a start of ${start.length} values is not cols × k`);
  let total = 0;
  for (let i = 0; i < a.length; i++) total += a[i]! * a[i]!;
  if (!Number.isFinite(total)) throw new RangeError('svdRangeFinder: a non-finite entry');
  // A column-major copy, so that B = QᵀA is dot products of contiguous columns.
  const columns = new Float64Array(rows * cols);
  for (let i = 0; i < rows; i++) for (let l = 0; l < cols; l++) columns[l * rows + i] = a[i * cols + l]!;
  const limit = Math.min(rows, cols);
  if (total === 0) return { svd: emptySvd(rows, cols), subspace: new Float64Array(0), sketch: 0, residual: 0 };
  const allowed = LOW_RANK_RELATIVE_TOLERANCE ** 2 * total;
  let k = start.length / cols + RANGE_FINDER_OVERSAMPLING;
  for (let attempt = 0; k < limit; attempt++, k = Math.min(limit, 2 * k)) {
    const omega = new Float64Array(cols * k);
    omega.set(start.subarray(0, Math.min(start.length, omega.length)));
    const fresh = omega.length - Math.min(start.length, omega.length);
    omega.set(gaussians(fresh, 0x5eed + attempt), omega.length - fresh);
    const q = orthonormalBasis(product(a, rows, cols, omega, k), rows, k);
    // B = QᵀA (k×cols row-major), and the energy it holds.
    const b = new Float64Array(k * cols);
    let captured = 0;
    for (let j = 0; j < k; j++) {
      const qj = j * rows;
      for (let l = 0; l < cols; l++) {
        const al = l * rows;
        let sum = 0;
        for (let i = 0; i < rows; i++) sum += q[qj + i]! * columns[al + i]!;
        b[j * cols + l] = sum;
        captured += sum * sum;
      }
    }
    const left = total - captured;
    if (left > allowed) continue;
    return lift(svdGramJacobi(b, k, cols), q, rows, cols, Math.sqrt(total), Math.sqrt(Math.max(0, left)));
  }
  return null;
}

/** Y = A·Ω (rows×k column-major) for the row-major A and column-major Ω (cols×k). */
function product(
  a: Float32Array | Float64Array,
  rows: number,
  cols: number,
  omega: Float64Array,
  k: number,
): Float64Array {
  const y = new Float64Array(rows * k);
  for (let j = 0; j < k; j++) {
    const oj = j * cols;
    const yj = j * rows;
    for (let i = 0; i < rows; i++) {
      let sum = 0;
      const ai = i * cols;
      for (let l = 0; l < cols; l++) sum += a[ai + l]! * omega[oj + l]!;
      y[yj + i] = sum;
    }
  }
  return y;
}

/** The first k columns of Householder's Q for the column-major rows×k `y` (k ≤ rows), formed column-major. */
function orthonormalBasis(y: Float64Array, rows: number, k: number): Float64Array {
  const qr = householderQr(y, rows, k);
  const q = new Float64Array(rows * k);
  const e = new Float64Array(k);
  const column = new Float64Array(rows);
  for (let j = 0; j < k; j++) {
    e.fill(0);
    e[j] = 1;
    q.set(applyQ(qr, e, column), j * rows);
  }
  return q;
}

/**
 * U = Q·U_B, σ and V = V_B of the triplets above the cut-off, in svdLowRank's layout, and V as the next warm start.
 */
function lift(
  small: SvdResult,
  q: Float64Array,
  rows: number,
  cols: number,
  norm: number,
  residual: number,
): RangeFinderSvd {
  const cutoff = LOW_RANK_RELATIVE_TOLERANCE * norm;
  let rank = 0;
  while (rank < small.rank && small.singularValues[rank]! > cutoff) rank++;
  const svd = liftSvd(small, q, rows, cols, rank);
  return { svd, subspace: rightSubspace(svd), sketch: small.rows, residual };
}

/** V of an SVD's rank triplets, cols × rank column-major: the form of a warm start. */
export function rightSubspace({ v, r, rank, cols }: SvdResult): Float64Array {
  const out = new Float64Array(cols * rank);
  for (let t = 0; t < rank; t++) for (let l = 0; l < cols; l++) out[t * cols + l] = v[l * r + t]!;
  return out;
}

function emptySvd(rows: number, cols: number): SvdResult {
  const empty = new Float64Array(0);
  return { rows, cols, r: 0, u: empty, singularValues: empty, v: empty, rank: 0, sweeps: 0, converged: true };
}
