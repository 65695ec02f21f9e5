/**
 * CPU reference SVD: one-sided (Hestenes) Jacobi in Float64.
 *
 * The thin SVD A = U Σ Vᵀ of a row-major rows×cols matrix A, with
 * r = min(rows, cols) triplets. Column pairs of a working copy W (initially A,
 * or Aᵀ when A is wide) are rotated until every pair is orthogonal to a
 * relative tolerance; then σⱼ = ‖wⱼ‖, uⱼ = wⱼ/σⱼ and V is the product of the
 * rotations. This is the specification shaders/svd/jacobi.wgsl is tested
 * against.
 *
 * Output layout (all row-major, r = min(rows, cols)):
 *   u:              rows×r, U[i][k] at u[i·r + k]  (column k is the k-th left singular vector)
 *   singularValues: r, descending, σ₀ ≥ σ₁ ≥ … ≥ 0
 *   v:              cols×r, V[j][k] at v[j·r + k]  (column k is the k-th right singular vector)
 *
 * Rank deficiency: a σₖ at or below rankTolerance(σ₀) = max(rows, cols)·ε·σ₀
 * is numerically zero; it is reported as exactly 0 and both its columns, uₖ
 * and vₖ, are zero vectors (not completed to an orthonormal basis). So
 * U Σ Vᵀ reconstructs A and UᵀU = VᵀV = diag(1 for k < rank, 0 after).
 * The zero matrix gives rank 0, σ = 0, U = 0, V = 0. Consumers use only the
 * first `rank` triplets.
 */

import { fourDots } from './dots';
import { descendingOrder } from './order';
import { Scratch } from './scratch';
import { symmetricEigen } from './symmetricEigen';

/** Temporaries of one call (see scratch.ts): the working copy, the Gram and the copy W·V₀ is formed from. */
const WORK = new Scratch();
const GRAM = new Scratch();
const ORIGINAL = new Scratch();

/** Double-precision unit roundoff (2⁻⁵²), the scale of every tolerance here. */
const EPS = Number.EPSILON;

/** Default cap on sweeps; quadratic convergence typically needs 6–12. */
export const SVD_MAX_SWEEPS = 60;

/** Tuning knobs of svdJacobi; the defaults are what the GPU kernel is compared against. */
export interface SvdOptions {
  /** Stop once every column pair has |cos| ≤ tolerance (default max(√M, 4)·ε, M the long side). */
  readonly tolerance?: number;
  /** At most this many sweeps (default SVD_MAX_SWEEPS). */
  readonly maxSweeps?: number;
  /**
   * A caller that treats every σ ≤ f as noise (it drops those triplets and
   * needs only their Σσ²) passes f here (in A's units; default 0). Columns
   * shorter than f then count as f long in the stopping rule, |wₚ·w_q| ≤
   * tolerance·max(‖wₚ‖, f)·max(‖w_q‖, f): pairs of such columns, whose
   * directions are rounding noise, are not rotated sweep after sweep to a
   * relative orthogonality nobody reads. What is read stays as accurate: a
   * column wₚ longer than f meets every other column with |wₚ·w_q| ≤
   * tolerance·‖wₚ‖·max(‖w_q‖, f) < tolerance·‖wₚ‖², so the rotation it still
   * lacks turns it by less than about the tolerance, as under the full rule;
   * the short columns' Gram is diagonal to tolerance·f², so none of their
   * span's σ exceeds f·(1 + n·tolerance), and their Σ‖w‖² is that span's
   * Σσ² (a rotation keeps the trace).
   */
  readonly negligibleNorm?: number;
}

/** The thin SVD A = U diag(σ) Vᵀ; layouts as in the module comment. */
export interface SvdResult {
  readonly rows: number;
  readonly cols: number;
  /** r = min(rows, cols): the number of triplets stored. */
  readonly r: number;
  /** rows×r row-major. */
  readonly u: Float64Array;
  /** r values, descending; numerically zero ones are exactly 0. */
  readonly singularValues: Float64Array;
  /** cols×r row-major. */
  readonly v: Float64Array;
  /** Number of σ above rankTolerance: the triplets consumers should use. */
  readonly rank: number;
  /** Sweeps performed, including the final one that found nothing to rotate. */
  readonly sweeps: number;
  /** False if maxSweeps ran out before every pair met the tolerance. */
  readonly converged: boolean;
}

/** σ at or below this are numerically zero: max(rows, cols)·ε·σ₀ (as numpy's matrix_rank). */
export function rankTolerance(rows: number, cols: number, largestSingularValue: number): number {
  return Math.max(rows, cols) * EPS * largestSingularValue;
}

/** Thin SVD of a row-major rows×cols matrix by one-sided Jacobi (Hestenes 1958; LAPACK dgesvj's stopping rule). */
export function svdJacobi(
  a: Float64Array | Float32Array,
  rows: number,
  cols: number,
  options: SvdOptions = {},
): SvdResult {
  const work = workingCopy(a, rows, cols, 'svdJacobi');
  const { n } = work;
  // Accumulated rotations, column-major n×n, starting at the identity.
  const rot = new Float64Array(n * n);
  for (let j = 0; j < n; j++) rot[j * n + j] = 1;
  return finish(work, rot, rows, cols, options);
}

/**
 * The same SVD as svdJacobi (same stopping rule, same layout), for small
 * dense matrices: one-sided Jacobi started not from the identity but from V₀,
 * the eigenvectors of the short side's Gram WᵀW (core/linalg/symmetricEigen.ts),
 * so the columns of W·V₀ are already nearly orthogonal and the sweeps that
 * remain are the quadratically convergent ones. The eigenvectors are only a
 * starting rotation: σ and the vectors come from Jacobi on W·V₀ itself, so a
 * Gram's lost digits never reach them. If the eigensolver fails to converge,
 * the start is the identity (plain svdJacobi).
 */
export function svdGramJacobi(
  a: Float64Array | Float32Array,
  rows: number,
  cols: number,
  options: SvdOptions = {},
): SvdResult {
  const work = workingCopy(a, rows, cols, 'svdGramJacobi');
  const { w, m, n } = work;
  const gram = GRAM.zeroed(n * n);
  for (let p = 0; p < n; p++) {
    let q = 0;
    // Four dot products per pass over column p (independent sums, each in i order, so the same values as one at a
    // time).
    for (; q + 4 <= p + 1; q += 4) {
      dotsWith(w, m, p, q, 4);
      gram.set(DOTS, p * n + q);
    }
    if (q <= p) {
      dotsWith(w, m, p, q, p + 1 - q);
      for (let k = 0; q + k <= p; k++) gram[p * n + q + k] = DOTS[k]!;
    }
  }
  // A caller that drops the σ below a floor needs the start no finer than the Gram's own accuracy, ε·‖WᵀW‖.
  const eigen = symmetricEigen(gram, n, (options.negligibleNorm ?? 0) > 0 ? { noiseLevel: EPS } : {});
  if (!eigen.converged) {
    const rot = new Float64Array(n * n);
    for (let j = 0; j < n; j++) rot[j * n + j] = 1;
    return finish(work, rot, rows, cols, options);
  }
  // The eigenvectors are this call's own: they become the accumulated rotation.
  const rot = eigen.vectors;
  // W ← W·V₀, column by column: four source columns per pass over a target column, added in k order.
  const original = ORIGINAL.zeroed(m * n);
  original.set(w);
  w.fill(0);
  for (let j = 0; j < n; j++) {
    const target = j * m;
    let k = 0;
    for (; k + 4 <= n; k += 4) {
      const c0 = rot[j * n + k]!;
      const c1 = rot[j * n + k + 1]!;
      const c2 = rot[j * n + k + 2]!;
      const c3 = rot[j * n + k + 3]!;
      const s0 = k * m;
      const s1 = s0 + m;
      const s2 = s1 + m;
      const s3 = s2 + m;
      for (let i = 0; i < m; i++) {
        w[target + i] =
          w[target + i]! +
          c0 * original[s0 + i]! +
          c1 * original[s1 + i]! +
          c2 * original[s2 + i]! +
          c3 * original[s3 + i]!;
      }
    }
    for (; k < n; k++) {
      const coefficient = rot[j * n + k]!;
      const source = k * m;
      for (let i = 0; i < m; i++) w[target + i] = w[target + i]! + coefficient * original[source + i]!;
    }
  }
  return finish(work, rot, rows, cols, options);
}

/** A's tall-oriented, scaled, column-major working copy (see svdJacobi). */
interface WorkingCopy {
  /** m×n column-major: A (or Aᵀ when A is wide) scaled so max |a| = 1. */
  readonly w: Float64Array;
  /** Long side: length of a working column. */
  readonly m: number;
  /** Short side: number of working columns. */
  readonly n: number;
  readonly transposed: boolean;
  readonly maxAbs: number;
}

function workingCopy(a: Float64Array | Float32Array, rows: number, cols: number, name: string): WorkingCopy {
  if (!Number.isInteger(rows) || !Number.isInteger(cols) || rows < 1 || cols < 1) {
    throw new RangeError(`${name}: bad shape ${rows}×${cols}`);
  }
  if (a.length !== rows * cols) {
    throw new RangeError(`${name}: ${a.length} elements for a ${rows}×${cols} matrix`);
  }
  // Work on the tall orientation so the rotations act on r = min(rows, cols)
  // columns: A = U Σ Vᵀ, or for wide A, Aᵀ = V Σ Uᵀ with the roles swapped.
  const transposed = rows < cols;
  const m = transposed ? cols : rows;
  const n = transposed ? rows : cols;

  // Column-major working copy, scaled so max |a| = 1: squared column norms
  // then stay in [0, m] and cannot overflow; σ is scaled back at the end.
  let maxAbs = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    if (!Number.isFinite(x)) throw new RangeError(`${name}: non-finite entry at ${i}`);
    maxAbs = Math.max(maxAbs, Math.abs(x));
  }
  const scale = maxAbs > 0 ? 1 / maxAbs : 1;
  const w = WORK.zeroed(m * n);
  if (transposed) {
    // Working column j is row j of A, already contiguous.
    for (let k = 0; k < a.length; k++) w[k] = a[k]! * scale;
  } else {
    for (let i = 0; i < rows; i++) {
      for (let j = 0; j < cols; j++) w[j * m + i] = a[i * cols + j]! * scale;
    }
  }
  return { w, m, n, transposed, maxAbs };
}

/** Jacobi sweeps on the working copy from the rotation `rot`, then U, σ, V. */
function finish(
  { w, m, n, transposed, maxAbs }: WorkingCopy,
  rot: Float64Array,
  rows: number,
  cols: number,
  options: SvdOptions,
): SvdResult {
  const tolerance = options.tolerance ?? Math.max(Math.sqrt(m), 4) * EPS;
  const maxSweeps = options.maxSweeps ?? SVD_MAX_SWEEPS;
  // The working copy is A scaled by 1/maxAbs: so is the floor.
  const floor = maxAbs > 0 ? (options.negligibleNorm ?? 0) / maxAbs : 0;
  const { sweeps, converged } = orthogonaliseColumns(w, m, n, rot, tolerance, maxSweeps, floor * floor);
  return assemble(w, rot, m, n, rows, cols, transposed, maxAbs, sweeps, converged);
}

/** The last dotsWith's products (up to four). */
const DOTS = new Float64Array(4);

/** DOTS[k] = w_p·w_{q+k} for k < count ≤ 4 (column-major, columns of length m), each summed in i order. */
function dotsWith(w: Float64Array, m: number, p: number, q: number, count: number): void {
  if (count === 4) {
    fourDots(w, p * m, w, q * m, m, m, DOTS);
    return;
  }
  const bp = p * m;
  for (let k = 0; k < count; k++) {
    const bq = (q + k) * m;
    let sum = 0;
    for (let i = 0; i < m; i++) sum += w[bp + i]! * w[bq + i]!;
    DOTS[k] = sum;
  }
}

/** Squared Euclidean norm of column j (length m) of a column-major array. */
function columnNormSquared(w: Float64Array, m: number, j: number): number {
  let sum = 0;
  const base = j * m;
  for (let i = 0; i < m; i++) {
    const x = w[base + i]!;
    sum += x * x;
  }
  return sum;
}

/** Rotates the column pair (p, q) of a column-major array by [[c, s], [−s, c]]. */
function rotateColumns(w: Float64Array, m: number, p: number, q: number, c: number, s: number): void {
  const bp = p * m;
  const bq = q * m;
  for (let i = 0; i < m; i++) {
    const x = w[bp + i]!;
    const y = w[bq + i]!;
    w[bp + i] = c * x - s * y;
    w[bq + i] = s * x + c * y;
  }
}

/**
 * Cyclic one-sided Jacobi sweeps over all pairs p < q until a whole sweep
 * finds every pair orthogonal (|wₚ·w_q| ≤ tol·‖wₚ‖‖w_q‖, a norm below the
 * floor counting as the floor: SvdOptions.negligibleNorm). The tolerance is
 * relative, so convergence does not depend on the matrix's scale.
 */
function orthogonaliseColumns(
  w: Float64Array,
  m: number,
  n: number,
  rot: Float64Array,
  tolerance: number,
  maxSweeps: number,
  floorSq: number,
): { sweeps: number; converged: boolean } {
  const normSq = new Float64Array(n);
  for (let sweep = 1; sweep <= maxSweeps; sweep++) {
    // Fresh norms each sweep: the cheap updates below drift by a few ulps.
    for (let j = 0; j < n; j++) normSq[j] = columnNormSquared(w, m, j);
    let rotated = false;
    for (let p = 0; p < n - 1; p++) {
      // wₚ·w_q for the next four q at once while pairs are found orthogonal (a converged sweep), one at a time after
      // a rotation: a rotation changes wₚ, so the batch's later products are stale and taken afresh from the next q.
      let batchStart = n;
      let batchEnd = n;
      let span = 4;
      for (let q = p + 1; q < n; q++) {
        const alpha = normSq[p]!;
        const beta = normSq[q]!;
        if (alpha === 0 || beta === 0) continue; // a zero column is orthogonal to everything
        if (q >= batchEnd || q < batchStart) {
          batchStart = q;
          batchEnd = Math.min(n, q + span);
          dotsWith(w, m, p, q, batchEnd - q);
        }
        const gamma = DOTS[q - batchStart]!;
        span = 4;
        if (Math.abs(gamma) <= tolerance * Math.sqrt(Math.max(alpha, floorSq)) * Math.sqrt(Math.max(beta, floorSq)))
          continue;
        rotated = true;
        batchEnd = q + 1;
        span = 1;
        // The rotation that zeroes wₚ·w_q: t = tan θ is the smaller root of
        // t² + 2ζt − 1 = 0 with ζ = (β − α)/(2γ), which keeps |θ| ≤ π/4.
        const zeta = (beta - alpha) / (2 * gamma);
        const t = (zeta >= 0 ? 1 : -1) / (Math.abs(zeta) + Math.sqrt(1 + zeta * zeta));
        const c = 1 / Math.sqrt(1 + t * t);
        const s = c * t;
        rotateColumns(w, m, p, q, c, s);
        rotateColumns(rot, n, p, q, c, s);
        // Exact in exact arithmetic: ‖wₚ′‖² = α − tγ, ‖w_q′‖² = β + tγ. When
        // the update cancels (nearly parallel columns) recompute instead.
        const newAlpha = alpha - t * gamma;
        const newBeta = beta + t * gamma;
        // Stored, then replaced where it cancelled: as one conditional expression with the call, V8 boxed every
        // update as a heap number (14 KB a round on the MLP's factored core, garbage that collections then chase).
        normSq[p] = newAlpha;
        normSq[q] = newBeta;
        if (!(newAlpha > 0.25 * alpha)) normSq[p] = columnNormSquared(w, m, p);
        if (!(newBeta > 0.25 * beta)) normSq[q] = columnNormSquared(w, m, q);
      }
    }
    if (!rotated) return { sweeps: sweep, converged: true };
  }
  return { sweeps: maxSweeps, converged: false };
}

/** Sorts the orthogonalised columns by norm and writes U, σ, V in the documented layout. */
function assemble(
  w: Float64Array,
  rot: Float64Array,
  m: number,
  n: number,
  rows: number,
  cols: number,
  transposed: boolean,
  maxAbs: number,
  sweeps: number,
  converged: boolean,
): SvdResult {
  const r = n;
  const norms = new Float64Array(n);
  for (let j = 0; j < n; j++) norms[j] = Math.sqrt(columnNormSquared(w, m, j));
  const order = descendingOrder(norms, n);

  const largest = norms[order[0]!]!;
  const cutoff = rankTolerance(rows, cols, largest);
  // Long-side vectors come from W (normalised), short-side ones from the rotations.
  const longVectors = new Float64Array(m * r); // m×r row-major
  const shortVectors = new Float64Array(n * r); // n×r row-major
  const singularValues = new Float64Array(r);
  let rank = 0;
  for (let k = 0; k < r; k++) {
    const j = order[k]!;
    const norm = norms[j]!;
    // Sorted descending, so the numerically zero σ form a tail: stop there
    // and leave their σ, u and v at zero.
    if (!(norm > cutoff && norm > 0)) break;
    rank++;
    singularValues[k] = norm * maxAbs;
    const inv = 1 / norm;
    for (let i = 0; i < m; i++) longVectors[i * r + k] = w[j * m + i]! * inv;
    for (let i = 0; i < n; i++) shortVectors[i * r + k] = rot[j * n + i]!;
  }
  return transposed
    ? { rows, cols, r, u: shortVectors, singularValues, v: longVectors, rank, sweeps, converged }
    : { rows, cols, r, u: longVectors, singularValues, v: shortVectors, rank, sweeps, converged };
}
