/**
 * Eigen-decomposition of a small symmetric matrix, A = V diag(λ) Vᵀ, in
 * Float64: Householder reduction to tridiagonal form, then the implicit QL
 * iteration with Wilkinson-type shifts on the tridiagonal matrix, the
 * rotations accumulated into V. O(n³) in all, a few times fewer operations
 * than cyclic Jacobi on the same matrix.
 *
 * The eigenvalues are accurate to a few ε·‖A‖ in absolute terms, not
 * relative ones: small eigenvalues of an ill-conditioned A lose digits. The
 * one consumer, svdGramJacobi (core/linalg/svd.ts), uses the vectors only as
 * a starting rotation for one-sided Jacobi, which restores full accuracy.
 */

import { fourDots } from './dots';
import { descendingOrder } from './order';
import { Scratch } from './scratch';

const EPS = Number.EPSILON;

/** Temporaries of one call (see scratch.ts): the working copy, the reflectors and their product Q. */
const WORKING = new Scratch();
const REFLECTORS = new Scratch();
const PRODUCT = new Scratch();

/** Iteration cap per eigenvalue; the QL iteration typically needs 1–3. */
const MAX_ITERATIONS_PER_VALUE = 30;

/** λ and V of a symmetric matrix. */
export interface SymmetricEigen {
  readonly n: number;
  /** n eigenvalues, descending. */
  readonly values: Float64Array;
  /** n×n column-major: eigenvector k (unit norm) at [k·n, (k+1)·n), in the order of `values`. */
  readonly vectors: Float64Array;
  /** False if the QL iteration hit its cap; values and vectors are then not to be trusted. */
  readonly converged: boolean;
}

/** Options of symmetricEigen. */
export interface SymmetricEigenOptions {
  /**
   * Couplings of the tridiagonal form at or below noiseLevel·‖T‖ count as
   * zero too (default 0: only the relative test, see implicitQl). A caller
   * that needs the eigenpairs only to that absolute accuracy (svdGramJacobi
   * when its caller drops the small σ anyway) passes ε: a Gram graded down
   * to rounding noise then no longer spends QL steps resolving that noise to
   * its own scale (a trained model's factored core: 67 steps a call, 44 with
   * it).
   */
  readonly noiseLevel?: number;
}

/** Eigen-decomposition of the symmetric n×n matrix `a` (row-major; only its lower triangle is read). */
export function symmetricEigen(a: ArrayLike<number>, n: number, options: SymmetricEigenOptions = {}): SymmetricEigen {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`symmetricEigen: bad size ${n}`);
  if (a.length !== n * n) throw new RangeError(`symmetricEigen: ${a.length} elements for a ${n}×${n} matrix`);
  let maxAbs = 0;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      const x = a[i * n + j]!;
      if (!Number.isFinite(x)) throw new RangeError(`symmetricEigen: non-finite entry at ${i * n + j}`);
      maxAbs = Math.max(maxAbs, Math.abs(x));
    }
  }
  // Column-major working copy of the full symmetric matrix (column j = row j), scaled so max |a| = 1.
  const scale = maxAbs > 0 ? 1 / maxAbs : 1;
  const s = WORKING.zeroed(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      const x = a[i * n + j]! * scale;
      s[j * n + i] = x;
      s[i * n + j] = x;
    }
  }
  const diagonal = new Float64Array(n);
  const off = new Float64Array(n); // off[i] couples i and i+1; off[n−1] = 0
  const vectors = tridiagonalise(s, n, diagonal, off);
  const converged = implicitQl(diagonal, off, vectors, n, options.noiseLevel ?? 0);
  for (let i = 0; i < n; i++) diagonal[i] = diagonal[i]! * maxAbs;
  return sortDescending(diagonal, vectors, n, converged);
}

/**
 * Reduces the column-major symmetric `s` (destroyed) to tridiagonal form
 * T = Qᵀ S Q by Householder reflections H_k (k = 0 … n−3) that zero column k
 * below its subdiagonal; writes T's diagonal and off-diagonal and returns Q
 * column-major.
 */
function tridiagonalise(s: Float64Array, n: number, diagonal: Float64Array, off: Float64Array): Float64Array {
  // Reflector k at [k·n, (k+1)·n), unit norm, zero up to index k; read at its offset, not through a view per column.
  const reflectors = REFLECTORS.zeroed(n * n);
  const applied = new Uint8Array(n);
  const p = new Float64Array(n);
  for (let k = 0; k + 2 < n; k++) {
    const col = k * n;
    let normSq = 0;
    for (let i = k + 1; i < n; i++) normSq += s[col + i]! * s[col + i]!;
    const head = s[col + k + 1]!;
    if (!(normSq > head * head)) {
      off[k] = head; // already zero below the subdiagonal
      continue;
    }
    const norm = Math.sqrt(normSq);
    const alpha = head >= 0 ? -norm : norm;
    for (let i = k + 1; i < n; i++) reflectors[col + i] = s[col + i]!;
    reflectors[col + k + 1] = head - alpha;
    const vNorm = Math.sqrt(2 * norm * (norm + Math.abs(head)));
    for (let i = k + 1; i < n; i++) reflectors[col + i]! /= vNorm;
    applied[k] = 1;
    // Trailing block S' = H S H with H = I − 2vvᵀ: p = S v, q = 2(p − (vᵀp) v), S' = S − v qᵀ − q vᵀ.
    columnProducts(s, reflectors, col, n, k + 1, p);
    let vp = 0;
    for (let j = k + 1; j < n; j++) vp += p[j]! * reflectors[col + j]!;
    for (let j = k + 1; j < n; j++) p[j] = 2 * (p[j]! - vp * reflectors[col + j]!);
    for (let j = k + 1; j < n; j++) {
      const cj = j * n;
      const vj = reflectors[col + j]!;
      const pj = p[j]!;
      for (let i = k + 1; i < n; i++) s[cj + i] = s[cj + i]! - reflectors[col + i]! * pj - p[i]! * vj;
    }
    off[k] = alpha;
  }
  for (let i = 0; i < n; i++) diagonal[i] = s[i * n + i]!;
  if (n >= 2) off[n - 2] = s[(n - 2) * n + n - 1]!;
  off[n - 1] = 0;
  // Q = H_0 H_1 ⋯ H_{n−3}, built from the right end: Q ← H_k Q.
  const q = PRODUCT.zeroed(n * n);
  for (let j = 0; j < n; j++) q[j * n + j] = 1;
  for (let k = n - 3; k >= 0; k--) {
    if (applied[k] === 0) continue;
    // Each column's product with v first (none depends on another column's update), then each column's update.
    columnProducts(q, reflectors, k * n, n, k + 1, p);
    for (let j = k + 1; j < n; j++) reflect(q, reflectors, k * n, j * n, k + 1, n, p[j]!);
  }
  return q;
}

/**
 * out[j] = Σ_{i ≥ from} a[j·n + i]·v[vAt + i] for j ≥ from (column j of the
 * column-major n×n `a` against the vector at vAt of `v`), four columns per
 * pass (fourDots), each sum in i order as one at a time would add it.
 */
function columnProducts(
  a: Float64Array,
  v: Float64Array,
  vAt: number,
  n: number,
  from: number,
  out: Float64Array,
): void {
  let j = from;
  for (; j + 4 <= n; j += 4) {
    fourDots(v, vAt + from, a, j * n + from, n, n - from, FOUR);
    out.set(FOUR, j);
  }
  for (; j < n; j++) {
    let sum = 0;
    const c = j * n;
    for (let i = from; i < n; i++) sum += a[c + i]! * v[vAt + i]!;
    out[j] = sum;
  }
}

/** The last fourDots of columnProducts. */
const FOUR = new Float64Array(4);

/** q[column + i] −= 2·dot·v[vAt + i] for i ≥ from: one column of Q ← H·Q (nothing when dot = 0). */
function reflect(
  q: Float64Array,
  v: Float64Array,
  vAt: number,
  column: number,
  from: number,
  n: number,
  dot: number,
): void {
  if (dot === 0) return;
  const twice = dot * 2;
  for (let i = from; i < n; i++) q[column + i] = q[column + i]! - twice * v[vAt + i]!;
}

/**
 * Diagonalises the symmetric tridiagonal (diagonal, off) in place by the
 * implicit QL iteration: a shifted QL step is a chase of Givens rotations
 * from the bottom of the unreduced block up to its top; each rotation also
 * turns two columns of `vectors` (column-major n×n). Returns false if an
 * eigenvalue needed more than MAX_ITERATIONS_PER_VALUE steps.
 *
 * A coupling is negligible at ε times its two diagonal entries (the eigenvalues
 * of a graded matrix to their own scale), or at noiseLevel·‖T‖ (EISPACK's
 * tql2 test, when noiseLevel = ε).
 */
function implicitQl(d: Float64Array, e: Float64Array, z: Float64Array, n: number, noiseLevel: number): boolean {
  let norm = 0;
  for (let i = 0; i < n; i++) norm = Math.max(norm, Math.abs(d[i]!) + Math.abs(e[i]!));
  const negligible = noiseLevel * norm;
  for (let l = 0; l < n; l++) {
    for (let iteration = 0; ; iteration++) {
      // The first negligible coupling at or below l ends the unreduced block [l, m].
      let m = l;
      while (
        m < n - 1 &&
        Math.abs(e[m]!) > EPS * (Math.abs(d[m]!) + Math.abs(d[m + 1]!)) &&
        Math.abs(e[m]!) > negligible
      )
        m++;
      if (m === l) break;
      if (iteration === MAX_ITERATIONS_PER_VALUE) return false;
      // Shift: the eigenvalue of the leading 2×2 of the block nearer d[l].
      let g = (d[l + 1]! - d[l]!) / (2 * e[l]!);
      let r = Math.sqrt(g * g + 1);
      g = d[m]! - d[l]! + e[l]! / (g + (g >= 0 ? r : -r));
      let s = 1;
      let c = 1;
      let p = 0;
      let i = m - 1;
      for (; i >= l; i--) {
        const f = s * e[i]!;
        const b = c * e[i]!;
        // No Math.hypot (slow in V8): the matrix is scaled to max |a| = 1, so f² + g² cannot overflow.
        r = Math.sqrt(f * f + g * g);
        e[i + 1] = r;
        if (r === 0) {
          // The chase underflowed: the block splits here; undo the shift and restart.
          d[i + 1] = d[i + 1]! - p;
          e[m] = 0;
          break;
        }
        s = f / r;
        c = g / r;
        g = d[i + 1]! - p;
        r = (d[i]! - g) * s + 2 * c * b;
        p = s * r;
        d[i + 1] = g + p;
        g = c * r - b;
        const ci = i * n;
        const cn = ci + n;
        for (let k = 0; k < n; k++) {
          const t = z[cn + k]!;
          const x = z[ci + k]!;
          z[cn + k] = s * x + c * t;
          z[ci + k] = c * x - s * t;
        }
      }
      if (i >= l) continue;
      d[l] = d[l]! - p;
      e[l] = g;
      e[m] = 0;
    }
  }
  return true;
}

/** Orders the eigenpairs by descending eigenvalue. */
function sortDescending(d: Float64Array, z: Float64Array, n: number, converged: boolean): SymmetricEigen {
  const order = descendingOrder(d, n);
  const values = new Float64Array(n);
  const vectors = new Float64Array(n * n);
  for (let position = 0; position < n; position++) {
    const k = order[position]!;
    values[position] = d[k]!;
    for (let i = 0; i < n; i++) vectors[position * n + i] = z[k * n + i]!;
  }
  return { n, values, vectors, converged };
}
