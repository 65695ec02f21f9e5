/**
 * The SVD of a gradient through its rank-revealing QR: far cheaper than
 * Jacobi on the whole matrix when the rank is small.
 *
 * A dense layer's minibatch gradient is G = Xᵀ·Δ, so rank(G) ≤ batch size
 * (docs/design.md, "Decompositions"): the 784×128 gradient of a batch of 32 has
 * at most 32 non-zero singular values. Gram–Schmidt with column pivoting,
 * G = Q·R, stops at the numerical rank r; one-sided Jacobi then runs only on
 * the small r×cols factor: G = Q R = (Q U_R) Σ V_Rᵀ. For 784×128 at batch 32
 * this is 5–10× faster than svdJacobi on G, with the same σ to ~1e-14.
 *
 * Directions whose residual norm falls below 10⁻⁶·‖G‖_F end the
 * factorisation. A float32 gradient of rank r carries float32 rounding noise
 * in its other directions (~10⁻⁷ relative); without this cut-off every such
 * matrix would look full-rank. Those directions would get sampling
 * probabilities of order 10⁻⁶ anyway.
 */
import { fourDots } from './dots';
import { svdJacobi, type SvdResult } from './svd';

/** Residual column norms below this fraction of ‖G‖_F end the factorisation. */
export const LOW_RANK_RELATIVE_TOLERANCE = 1e-6;

interface PivotedQr {
  /** rows×rank, column-major: direction k at [k·rows, (k+1)·rows). */
  readonly q: Float64Array;
  /** rank×cols, row-major, columns in G's order. */
  readonly r: Float64Array;
  readonly rank: number;
}

/** G = Q·R by Gram–Schmidt with column pivoting (re-orthogonalised), stopping at the numerical rank. */
function pivotedQr(a: Float64Array | Float32Array, rows: number, cols: number): PivotedQr {
  // Column-major working copy: column j of G at [j·rows, (j+1)·rows).
  const w = new Float64Array(rows * cols);
  let total = 0;
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      const x = a[i * cols + j]!;
      w[j * rows + i] = x;
      total += x * x;
    }
  }
  const limit = Math.min(rows, cols);
  const q = new Float64Array(rows * limit);
  const rAll = new Float64Array(limit * cols);
  const threshold = LOW_RANK_RELATIVE_TOLERANCE ** 2 * total;
  let rank = 0;
  while (rank < limit) {
    // Pivot on the largest residual column (norms recomputed: exact, and cheap next to the update).
    let best = -1;
    let bestNorm = threshold;
    for (let j = 0; j < cols; j++) {
      let s = 0;
      for (let i = j * rows, end = i + rows; i < end; i++) s += w[i]! * w[i]!;
      if (s > bestNorm) {
        bestNorm = s;
        best = j;
      }
    }
    if (best < 0) break;
    const qk = rank * rows;
    for (let i = 0; i < rows; i++) q[qk + i] = w[best * rows + i]!;
    // Orthogonalise once more against the earlier directions ("twice is enough").
    for (let p = 0; p < rank; p++) {
      const qp = p * rows;
      let dot = 0;
      for (let i = 0; i < rows; i++) dot += q[qp + i]! * q[qk + i]!;
      for (let i = 0; i < rows; i++) q[qk + i]! -= dot * q[qp + i]!;
    }
    let norm = 0;
    for (let i = 0; i < rows; i++) norm += q[qk + i]! * q[qk + i]!;
    norm = Math.sqrt(norm);
    for (let i = 0; i < rows; i++) q[qk + i]! /= norm;
    // Row `rank` of R, and the residual W ← W − q (qᵀW): four columns' products per pass (fourDots; no column's
    // update touches another column), then each column's update.
    const rRow = rank * cols;
    let j = 0;
    for (; j + 4 <= cols; j += 4) {
      fourDots(q, qk, w, j * rows, rows, rows, FOUR);
      rAll.set(FOUR, rRow + j);
      for (let c = 0; c < 4; c++) subtractMultiple(w, (j + c) * rows, q, qk, rows, FOUR[c]!);
    }
    for (; j < cols; j++) {
      const base = j * rows;
      let dot = 0;
      for (let i = 0; i < rows; i++) dot += q[qk + i]! * w[base + i]!;
      rAll[rRow + j] = dot;
      subtractMultiple(w, base, q, qk, rows, dot);
    }
    rank++;
  }
  // Each residual had the earlier directions removed, so G = Σₖ qₖ rₖᵀ.
  return { q: q.subarray(0, rank * rows), r: rAll.subarray(0, rank * cols), rank };
}

/** The last fourDots of pivotedQr. */
const FOUR = new Float64Array(4);

/** w[at + i] −= factor·q[qAt + i] for i < length: a column of the residual loses its component along q. */
function subtractMultiple(
  w: Float64Array,
  at: number,
  q: Float64Array,
  qAt: number,
  length: number,
  factor: number,
): void {
  for (let i = 0; i < length; i++) w[at + i]! -= factor * q[qAt + i]!;
}

/**
 * Thin SVD of a row-major rows×cols matrix through its pivoted QR. Same
 * layout as svdJacobi (u rows×r and v cols×r row-major, σ descending), except
 * that only r = the numerical rank triplets are stored, all non-zero.
 */
export function svdLowRank(a: Float64Array | Float32Array, rows: number, cols: number): SvdResult {
  if (!Number.isInteger(rows) || !Number.isInteger(cols) || rows < 1 || cols < 1) {
    throw new RangeError(`svdLowRank: bad shape ${rows}×${cols}`);
  }
  if (a.length !== rows * cols) throw new RangeError(`svdLowRank: ${a.length} elements for a ${rows}×${cols} matrix`);
  const { q, r, rank } = pivotedQr(a, rows, cols);
  if (rank === 0) {
    const empty = new Float64Array(0);
    return { rows, cols, r: 0, u: empty, singularValues: empty, v: empty, rank: 0, sweeps: 0, converged: true };
  }
  const small = svdJacobi(r, rank, cols); // R = U_R Σ V_Rᵀ
  return liftSvd(small, q, rows, cols, small.rank);
}

/**
 * The SVD of Q·S from the SVD of S (k×cols) and Q (rows×k, column-major,
 * orthonormal columns): its first `count` triplets, U = Q·U_S, σ and
 * V = V_S, in svdLowRank's layout.
 */
export function liftSvd(small: SvdResult, q: Float64Array, rows: number, cols: number, count: number): SvdResult {
  const width = small.r;
  const inner = small.rows;
  const u = new Float64Array(rows * count);
  const v = new Float64Array(cols * count);
  for (let t = 0; t < count; t++) {
    // u_t = Q · (column t of U_S)
    for (let p = 0; p < inner; p++) {
      const coefficient = small.u[p * width + t]!;
      if (coefficient === 0) continue;
      const qp = p * rows;
      for (let i = 0; i < rows; i++) u[i * count + t]! += coefficient * q[qp + i]!;
    }
    for (let j = 0; j < cols; j++) v[j * count + t] = small.v[j * width + t]!;
  }
  return {
    rows,
    cols,
    r: count,
    u,
    singularValues: small.singularValues.slice(0, count),
    v,
    rank: count,
    sweeps: small.sweeps,
    converged: small.converged,
  };
}
