/**
 * A thin QR of a tall factor through its Gram matrix (CholeskyQR): for F,
 * B×d example-major (a layer's input X or output delta Δ over a batch),
 * K = F·Fᵀ (B×B), K = RᵀR by Cholesky, so Fᵀ = Q·R with Q = Fᵀ·R⁻¹. Q is
 * never formed: Q·y = Fᵀ·(R⁻¹y) costs one pass over F's non-zeros.
 *
 * Fast where Householder (core/linalg/householderQr.ts) is slow: K is B²/2
 * dot products over F's rows, which skip F's zeros (an MNIST digit is ~80%
 * blank, a ReLU delta ~50% zero). The price is accuracy: the Gram squares
 * F's condition number, so Q is orthonormal only to within what rounding
 * left in K − RᵀR. With z = R⁻¹y (as computed), the error of one vector's
 * squared norm is bounded by
 *
 *   |‖Fᵀz‖² − ‖y‖²| ≤ γ_L·(Σ_b |z_b|·‖f_b‖)² + γ_{B+1}·‖|R||z|‖² +
 * 2γ_B·‖y‖·‖|R||z|‖ (+ γ_B²‖|R||z|‖²),
 *
 * (γ_k = k·u/(1 − k·u), u = 2⁻⁵³): the Gram's dot products of at most L
 * non-zero terms (|ΔK| ≤ γ_L|F||F|ᵀ, and Σᵢ|f_ai||f_bi| ≤ ‖f_a‖‖f_b‖),
 * Cholesky's backward error (|ΔK| ≤ γ_{B+1}|R|ᵀ|R|) and the back
 * substitution's (|ΔR| ≤ γ_B|R|) (Higham, "Accuracy and Stability of
 * Numerical Algorithms", Thms 3.5, 8.5 and 10.3); the error of the inner
 * product of two such vectors is at most the larger of their two bounds.
 * Every term is invariant under scaling F's rows (z scales inversely), as
 * CholeskyQR's accuracy is: graded examples cost nothing, nearly dependent
 * ones make z, and the bound, large. The caller
 * (core/linalg/factoredSvd.ts) checks it for every singular vector it keeps
 * and falls back to Householder when it is too large.
 */
import { Scratch } from './scratch';

/** Temporaries of one call (see scratch.ts): the Gram's dense lanes, R⁻¹ for the uniform bound. */
const LANES = new Scratch();
const INVERSE = new Scratch();

/** Double-precision unit roundoff u = 2⁻⁵³. */
const UNIT_ROUNDOFF = Number.EPSILON / 2;

/** γ_k = k·u/(1 − k·u): the relative error bound of a sum of k rounded terms. */
function gamma(k: number): number {
  return (k * UNIT_ROUNDOFF) / (1 - k * UNIT_ROUNDOFF);
}

/** The CholeskyQR of Fᵀ for a factor F (B×d, example-major). */
export interface GramCholesky {
  /** d: the length of the basis vectors. */
  readonly size: number;
  /** B: the number of examples (columns of Fᵀ). */
  readonly batch: number;
  /** B×B row-major, upper triangular, positive diagonal: RᵀR = F·Fᵀ. */
  readonly r: Float64Array;
  /** The bound of the module comment on |‖Fᵀz‖² − ‖y‖²| for z = solve(y). */
  normBound(y: ArrayLike<number>, z: ArrayLike<number>): number;
  /**
   * A bound at least normBound(y, solve(y)) for every y with ‖y‖ ≤ yNorm,
   * from R⁻¹ formed once (see uniformBound); Infinity when R is too
   * ill-conditioned for it to hold.
   */
  uniformNormBound(yNorm: number): number;
  /** z = R⁻¹y for y of length B. */
  solve(y: ArrayLike<number>, out: Float64Array): Float64Array;
  /** out (length d) = Fᵀ·z: with z = R⁻¹y, this is Q·y. */
  combine(z: ArrayLike<number>, out: Float64Array): Float64Array;
}

/**
 * CholeskyQR of Fᵀ, F given as the rows `examples` of the B×d row-major
 * float32 `factor` (B = examples.length). Null when Cholesky breaks down
 * (F·Fᵀ numerically singular: a zero or repeated example, or rank below B):
 * the caller uses Householder then.
 */
export function gramCholesky(factor: Float32Array, size: number, examples: Uint32Array): GramCholesky | null {
  return gramCholeskyOfRows(sparseRows(factor, size, examples), size);
}

/** gramCholesky of a factor already in sparse rows (factoredSvd builds them once and reads its checks off them too). */
export function gramCholeskyOfRows(rows: SparseRows, size: number): GramCholesky | null {
  const { rowStart, index, value, sumOfSquares } = rows;
  const batch = rowStart.length - 1;
  if (!Number.isFinite(sumOfSquares)) throw new RangeError('gramCholesky: the factor has a non-finite value');
  const r = new Float64Array(batch * batch);
  gram(rowStart, index, value, size, batch, r);
  // ‖f_b‖ = √K_bb, before Cholesky overwrites K.
  const rowNorms = new Float64Array(batch);
  for (let b = 0; b < batch; b++) rowNorms[b] = Math.sqrt(r[b * batch + b]!);
  if (!cholesky(r, batch)) return null;
  return new CholeskyQr(rows, size, r, rowNorms);
}

/**
 * A CholeskyQR's methods live on a class, not in closures made per call: a
 * worker makes one or two of these a round, and V8 holds a closure's
 * optimised code only weakly once the closure is gone, so each major
 * collection sent the next round's closures back to the interpreter until
 * they were recompiled (docs/design.md, "The CPU step's speed").
 */
class CholeskyQr implements GramCholesky {
  readonly batch: number;
  readonly #rows: SparseRows;
  readonly #rowNorms: Float64Array;
  readonly #gammaGram: number;
  readonly #gammaCholesky: number;
  readonly #gammaSolve: number;
  /** normBound's |R|·|z|. */
  readonly #w: Float64Array;
  #uniform: UniformBound | null | undefined;

  constructor(
    rows: SparseRows,
    readonly size: number,
    readonly r: Float64Array,
    rowNorms: Float64Array,
  ) {
    this.batch = rows.rowStart.length - 1;
    this.#rows = rows;
    this.#rowNorms = rowNorms;
    this.#gammaGram = gamma(rows.longest);
    this.#gammaCholesky = gamma(this.batch + 1);
    this.#gammaSolve = gamma(this.batch);
    this.#w = new Float64Array(this.batch);
  }

  solve(y: ArrayLike<number>, out: Float64Array): Float64Array {
    const { batch, r } = this;
    // Back substitution: R z = y, R upper triangular.
    for (let i = batch - 1; i >= 0; i--) {
      let sum = y[i]!;
      const row = i * batch;
      for (let j = i + 1; j < batch; j++) sum -= r[row + j]! * out[j]!;
      out[i] = sum / r[row + i]!;
    }
    return out;
  }

  combine(z: ArrayLike<number>, out: Float64Array): Float64Array {
    const { rowStart, index, value } = this.#rows;
    out.fill(0);
    for (let b = 0; b < this.batch; b++) {
      const zb = z[b]!;
      if (zb === 0) continue;
      for (let t = rowStart[b]!, end = rowStart[b + 1]!; t < end; t++)
        out[index[t]!] = out[index[t]!]! + zb * value[t]!;
    }
    return out;
  }

  normBound(y: ArrayLike<number>, z: ArrayLike<number>): number {
    const { batch, r } = this;
    const rowNorms = this.#rowNorms;
    const w = this.#w;
    let yy = 0;
    let weighted = 0;
    for (let b = 0; b < batch; b++) {
      yy += y[b]! * y[b]!;
      weighted += Math.abs(z[b]!) * rowNorms[b]!;
      // w = |R|·|z|, R upper triangular.
      let sum = 0;
      for (let j = b; j < batch; j++) sum += Math.abs(r[b * batch + j]!) * Math.abs(z[j]!);
      w[b] = sum;
    }
    let ww = 0;
    for (let b = 0; b < batch; b++) ww += w[b]! * w[b]!;
    const wNorm = Math.sqrt(ww);
    const gammaSolve = this.#gammaSolve;
    return (
      this.#gammaGram * weighted * weighted +
      this.#gammaCholesky * ww +
      2 * gammaSolve * Math.sqrt(yy) * wNorm +
      gammaSolve * gammaSolve * ww
    );
  }

  uniformNormBound(yNorm: number): number {
    // Formed on first use and kept, null included (no bound for this R).
    if (this.#uniform === undefined)
      this.#uniform = uniformBound(this.r, this.#rowNorms, this.batch, this.#rows.longest);
    const bound = this.#uniform;
    if (bound === null) return Number.POSITIVE_INFINITY;
    const zeta = (yNorm * bound.dw) / bound.denominator;
    return bound.quadratic * zeta * zeta + 2 * gamma(this.batch) * yNorm * bound.rd * zeta;
  }
}

/** The uniform bound's constants (see uniformBound): ‖DW‖_F, 1 − 2θ, ‖RD⁻¹‖_F and ζ²'s coefficient. */
interface UniformBound {
  readonly dw: number;
  readonly denominator: number;
  readonly rd: number;
  readonly quadratic: number;
}

/**
 * normBound over all y with ‖y‖ ≤ η at once, at the cost of one triangular
 * inverse instead of a solve per vector. With D = diag(‖f_b‖) (so R·D⁻¹ has
 * unit columns and the bound keeps normBound's invariance under row
 * scaling) and ζ ≥ ‖D·z‖ for every computed z = solve(y): Σ_b |z_b|‖f_b‖ =
 * ‖Dz‖₁ ≤ √B·ζ and ‖|R||z|‖ = ‖|RD⁻¹||Dz|‖ ≤ ‖RD⁻¹‖_F·ζ, so
 *
 *   normBound ≤ (γ_L·B + (γ_{B+1} + γ_B²)·‖RD⁻¹‖_F²)·ζ² + 2γ_B·η·‖RD⁻¹‖_F·ζ.
 *
 * ζ: the computed z solves (R + ΔR)z = y with |ΔR| ≤ γ_B|R| (Higham,
 * Thm 8.5), and so does each computed column of W ≈ R⁻¹ (the same back
 * substitution on eₖ); with θ = γ_B·‖RD⁻¹‖_F·‖DW‖_F < 1/2 that gives
 * ‖D·R⁻¹‖_F ≤ ‖DW‖_F/(1 − θ) and ‖Dz‖ ≤ ζ = η·‖DW‖_F/(1 − 2θ). Null
 * when θ ≥ 1/2: R is too ill-conditioned for the bound to hold.
 */
function uniformBound(r: Float64Array, rowNorms: Float64Array, batch: number, longest: number): UniformBound | null {
  // W = R⁻¹, upper triangular, column by column: R·w = e_c has w_i = 0 for i > c.
  const w = INVERSE.zeroed(batch * batch);
  for (let c = 0; c < batch; c++) {
    for (let i = c; i >= 0; i--) {
      let sum = i === c ? 1 : 0;
      const row = i * batch;
      for (let j = i + 1; j <= c; j++) sum -= r[row + j]! * w[j * batch + c]!;
      w[row + c] = sum / r[row + i]!;
    }
  }
  let scaledInverse = 0; // ‖D·W‖_F²
  let scaledR = 0; // ‖R·D⁻¹‖_F²
  for (let i = 0; i < batch; i++) {
    for (let j = i; j < batch; j++) {
      scaledInverse += (rowNorms[i]! * w[i * batch + j]!) ** 2;
      scaledR += (r[i * batch + j]! / rowNorms[j]!) ** 2;
    }
  }
  const dw = Math.sqrt(scaledInverse);
  const rd = Math.sqrt(scaledR);
  const theta = gamma(batch) * rd * dw;
  if (!(theta < 0.5)) return null;
  const quadratic = gamma(longest) * batch + (gamma(batch + 1) + gamma(batch) ** 2) * scaledR;
  return { dw, denominator: 1 - 2 * theta, rd, quadratic };
}

/** A factor's kept rows in compressed sparse row form. */
export interface SparseRows {
  /** Row b's non-zeros are [rowStart[b], rowStart[b + 1]). */
  readonly rowStart: Uint32Array;
  readonly index: Uint32Array;
  /** The factor's own float32 values (exact: nothing is computed on them here). */
  readonly value: Float32Array;
  /** The most non-zeros in one row: the length of the Gram's longest dot product. */
  readonly longest: number;
  /** Σ of the squared entries, ‖F‖_F² = trace(F·Fᵀ); not finite iff some entry is not. */
  readonly sumOfSquares: number;
}

/** Scratch for sparseRows, grown as needed and reused: one pass over the factor, then a copy of just its non-zeros. */
let scratchIndex = new Uint32Array(0);
let scratchValue = new Float32Array(0);

/**
 * The rows `examples` of the row-major float32 `factor` (rows of `size` values) in compressed sparse row form, from one
 * pass.
 */
export function sparseRows(factor: Float32Array, size: number, examples: Uint32Array): SparseRows {
  const batch = examples.length;
  if (scratchIndex.length < batch * size) {
    scratchIndex = new Uint32Array(batch * size);
    scratchValue = new Float32Array(batch * size);
  }
  const rowStart = new Uint32Array(batch + 1);
  let t = 0;
  let longest = 0;
  let sumOfSquares = 0;
  for (let b = 0; b < batch; b++) {
    const base = examples[b]! * size;
    for (let i = 0; i < size; i++) {
      const x = factor[base + i]!;
      if (x === 0) continue;
      scratchIndex[t] = i;
      scratchValue[t++] = x;
      sumOfSquares += x * x;
    }
    rowStart[b + 1] = t;
    longest = Math.max(longest, t - rowStart[b]!);
  }
  return { rowStart, index: scratchIndex.slice(0, t), value: scratchValue.slice(0, t), longest, sumOfSquares };
}

/**
 * The rows `keep` (increasing positions in `rows`) of sparse rows, as sparseRows would give them for those rows alone.
 */
export function selectSparseRows(rows: SparseRows, keep: Uint32Array): SparseRows {
  const rowStart = new Uint32Array(keep.length + 1);
  let total = 0;
  for (let k = 0; k < keep.length; k++) total += rows.rowStart[keep[k]! + 1]! - rows.rowStart[keep[k]!]!;
  const index = new Uint32Array(total);
  const value = new Float32Array(total);
  let t = 0;
  let longest = 0;
  let sumOfSquares = 0;
  for (let k = 0; k < keep.length; k++) {
    const start = t;
    for (let u = rows.rowStart[keep[k]!]!, end = rows.rowStart[keep[k]! + 1]!; u < end; u++) {
      const x = rows.value[u]!;
      index[t] = rows.index[u]!;
      value[t++] = x;
      sumOfSquares += x * x;
    }
    rowStart[k + 1] = t;
    longest = Math.max(longest, t - start);
  }
  return { rowStart, index, value, longest, sumOfSquares };
}

/**
 * The upper triangle of the row-major B×B `out` = F·Fᵀ (row b, column a ≥ b).
 * Four rows a at a time are spread, interleaved, into `dense`, and every
 * sparse row b ≤ a is read once for all four dot products: a quarter of the
 * index loads of one row at a time, with the same sums in the same order.
 */
function gram(
  rowStart: Uint32Array,
  index: Uint32Array,
  value: Float32Array,
  size: number,
  batch: number,
  out: Float64Array,
): void {
  const dense = LANES.zeroed(size * 4);
  for (let a0 = 0; a0 < batch; a0 += 4) {
    const width = Math.min(4, batch - a0);
    for (let k = 0; k < width; k++) {
      for (let t = rowStart[a0 + k]!, end = rowStart[a0 + k + 1]!; t < end; t++) dense[index[t]! * 4 + k] = value[t]!;
    }
    for (let b = 0; b < a0 + width; b++) {
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      for (let t = rowStart[b]!, end = rowStart[b + 1]!; t < end; t++) {
        const x = value[t]!;
        const o = index[t]! * 4;
        s0 += dense[o]! * x;
        s1 += dense[o + 1]! * x;
        s2 += dense[o + 2]! * x;
        s3 += dense[o + 3]! * x;
      }
      // Only b ≤ a is kept (the upper triangle); the lanes past `width` are zero.
      const row = b * batch + a0;
      if (b <= a0) out[row] = s0;
      if (width > 1 && b <= a0 + 1) out[row + 1] = s1;
      if (width > 2 && b <= a0 + 2) out[row + 2] = s2;
      if (width > 3 && b <= a0 + 3) out[row + 3] = s3;
    }
    for (let k = 0; k < width; k++) {
      for (let t = rowStart[a0 + k]!, end = rowStart[a0 + k + 1]!; t < end; t++) dense[index[t]! * 4 + k] = 0;
    }
  }
}

/**
 * In place: the upper triangle of the row-major n×n `a` holds a symmetric
 * positive definite K on entry and R with RᵀR = K on exit; the strict lower
 * triangle is zeroed. False when a pivot is not positive (K not numerically
 * positive definite).
 */
function cholesky(a: Float64Array, n: number): boolean {
  for (let j = 0; j < n; j++) {
    const rowJ = j * n;
    let pivot = a[rowJ + j]!;
    for (let k = 0; k < j; k++) pivot -= a[k * n + j]! * a[k * n + j]!;
    if (!(pivot > 0) || !Number.isFinite(pivot)) return false;
    const diagonal = Math.sqrt(pivot);
    a[rowJ + j] = diagonal;
    for (let i = j + 1; i < n; i++) {
      let sum = a[rowJ + i]!;
      for (let k = 0; k < j; k++) sum -= a[k * n + j]! * a[k * n + i]!;
      a[rowJ + i] = sum / diagonal;
    }
    for (let i = 0; i < j; i++) a[rowJ + i] = 0;
  }
  return true;
}
