/**
 * The SVD of a gradient given as a product of two thin factors, G = Xᵀ·Δ,
 * without ever forming G (docs/design.md, "Decompositions").
 *
 * A dense layer's minibatch gradient is G = Xᵀ·Δ: X, the layer's input
 * (batch×rows), and Δ, its output delta (batch×cols, already divided by
 * the batch size). With thin QRs Xᵀ = Q_x R_x and Δᵀ = Q_Δ R_Δ,
 *
 *   G = Q_x (R_x R_Δᵀ) Q_Δᵀ,  and with the small core R_x R_Δᵀ = U_c Σ V_cᵀ,
 *   U = Q_x U_c,  V = Q_Δ V_c.
 *
 * The QR of a factor taller than the batch goes through its Gram matrix
 * (core/linalg/gramCholesky.ts: B² sparse dot products and a B×B Cholesky,
 * several times cheaper than Householder on an MNIST batch) when an
 * a-posteriori bound shows its vectors orthonormal to GRAM_ROUTE_TOLERANCE,
 * and through Householder (core/linalg/householderQr.ts) otherwise; examples
 * with a zero row in either factor are dropped first, and an example that
 * occurs more than once is kept once and weighed by its count in the core
 * (distinctExamples). The core is at most
 * batch×batch (32×32 for the MLP): its SVD is one-sided Jacobi started from
 * the eigenvectors of its Gram (svdGramJacobi, core/linalg/svd.ts), and a
 * singular vector costs one application of Q: only the atoms actually sent
 * are ever formed.
 *
 * Directions with σ ≤ LOW_RANK_RELATIVE_TOLERANCE·‖G‖_F are left out, as in
 * svdLowRank: they would get sampling probabilities of order 10⁻⁶.
 */
import { gramCholeskyOfRows, selectSparseRows, sparseRows, type GramCholesky, type SparseRows } from './gramCholesky';
import { fourDots } from './dots';
import { applyQ, householderQr, type ThinQr } from './householderQr';
import { LOW_RANK_RELATIVE_TOLERANCE } from './lowRankSvd';
import { Scratch } from './scratch';
import { svdGramJacobi, type SvdResult } from './svd';

/**
 * Two factors whose product is a weight gradient, G = inputᵀ·delta (rows ×
 * cols), with inner dimension `batch` = K: G's rank is at most K, so a
 * spectral compressor can take its SVD from these instead of from the
 * rows × cols matrix. A dense layer's are its input X and output delta Δ
 * (K = the batch size); a convolution's (out × in·k·k kernel) are its output
 * delta and its im2col columns, one row per (example, output pixel)
 * (core/model/cpu/conv2d.ts, convFactors).
 */
export interface GradientFactors {
  /**
   * K × rows, row-major: X, the layer input, example-major (a convolution: the output delta per example and pixel).
   */
  readonly input: Float32Array;
  /** K × cols, row-major: Δ, d(mean loss)/d(pre-activation), example-major (a convolution: the im2col columns). */
  readonly delta: Float32Array;
  /** K, the inner dimension. */
  readonly batch: number;
}

/** The non-negligible singular triplets of G = Xᵀ·Δ, singular vectors formed on demand. */
export interface FactoredSvd {
  readonly rows: number;
  readonly cols: number;
  /** Triplets kept (σ above the cut-off), in descending σ. */
  readonly rank: number;
  /** rank values, descending, all > 0. */
  readonly singularValues: Float64Array;
  /**
   * Σσ² of the directions below the cut-off: ‖G‖_F² − Σ singularValues², without the cancellation of that
   * difference.
   */
  readonly residual: number;
  /** Writes uₖ (rows values) into `out`. */
  leftVector(k: number, out: Float64Array): Float64Array;
  /** Writes vₖ (cols values) into `out`. */
  rightVector(k: number, out: Float64Array): Float64Array;
  /**
   * The same triplets in svdJacobi's layout (u rows×rank, v cols×rank): for tests and diagnostics, it forms every
   * vector.
   */
  materialise(): SvdResult;
}

/**
 * Both factors in sparse rows (all B examples), read off one pass that also checks their shapes and that they are
 * finite.
 */
interface FactorRows {
  readonly input: SparseRows;
  readonly delta: SparseRows;
}

function factorRows(factors: GradientFactors, rows: number, cols: number): FactorRows {
  const { batch, input, delta } = factors;
  if (!Number.isInteger(batch) || batch < 1)
    throw new RangeError(`gradient factors: batch ${batch} is not a positive integer`);
  if (input.length !== batch * rows)
    throw new RangeError(
      `gradient factors: input has ${input.length} values, a ${batch}×${rows} factor needs ${batch * rows}`,
    );
  if (delta.length !== batch * cols)
    throw new RangeError(
      `gradient factors: delta has ${delta.length} values, a ${batch}×${cols} factor needs ${batch * cols}`,
    );
  const all = new Uint32Array(batch);
  for (let b = 0; b < batch; b++) all[b] = b;
  const sparse = { input: sparseRows(input, rows, all), delta: sparseRows(delta, cols, all) };
  // A sum of squares of float32 values is finite iff every value is; only then is the factor scanned for the one to
  // name.
  for (const name of ['input', 'delta'] as const) {
    if (Number.isFinite(sparse[name].sumOfSquares)) continue;
    const a = factors[name];
    for (let i = 0; i < a.length; i++)
      if (!Number.isFinite(a[i]!)) throw new RangeError(`gradient factors: ${name}[${i}] is ${a[i]}`);
  }
  return sparse;
}

/**
 * Largest accepted bound on how far the Gram route's singular vectors are
 * from orthonormal (|uₖ·uₗ − δₖₗ|, gramCholesky.ts's bound, per side). The
 * wire rounds every vector to float32 (relative 2⁻²⁴ ≈ 6e-8), so 1e-9 keeps
 * the route's own error 60 times below what the wire adds anyway; σ is then
 * within ~2e-9 relative of the exact SVD. Above it, the side is redone by
 * Householder.
 */
export const GRAM_ROUTE_TOLERANCE = 1e-9;

/**
 * Jacobi's stopping rule on the core, |cos| ≤ 1e-11 for every column pair
 * (the reference's √B·ε ≈ 1.3e-15 costs one more sweep): U_c is then
 * orthonormal to 1e-11 per pair and σ within ~B·1e-11 relative, both far
 * inside GRAM_ROUTE_TOLERANCE and the float32 rounding of the wire. From
 * the Gram's eigenvectors one sweep meets it on a freshly initialised MLP;
 * a trained one's core is graded (σ from σ₀ down to 1e-6·σ₀ and far below,
 * which the Gram resolves poorly) and takes about 3 sweeps, 4 to 6 before
 * the directions below the cut-off were left unrotated among themselves
 * (SvdOptions.negligibleNorm; docs/benchmarks.md).
 */
const CORE_TOLERANCE = 1e-11;

/** The core R_L·R_Rᵀ of one call (see scratch.ts); svdGramJacobi copies it before anything else takes scratch. */
const CORE = new Scratch();

/** The last fourDots of coreProduct. */
const FOUR = new Float64Array(4);

/** How one factor's thin QR was computed: Gram and Cholesky (fast), or Householder (exact to rounding). */
export type FactorQr = 'gram' | 'householder';

/** The factored SVD plus how it was computed (for tests, benchmarks and diagnostics). */
export interface FactoredSvdDetails extends FactoredSvd {
  /** The QR each factor (input, delta) took in the end. */
  readonly qr: readonly [FactorQr, FactorQr];
  /**
   * Distinct examples that contribute to G (a zero row in either factor is skipped, a repeated example counted once).
   */
  readonly examples: number;
}

/** Options of factoredSvd, for tests and benchmarks. */
export interface FactoredSvdOptions {
  /**
   * 'householder': no Gram route for either factor. 'gram': the Gram route
   * wherever Cholesky succeeds, without the accuracy check (to show what the
   * check is for). Absent: the checked choice described at factoredSvd.
   */
  readonly qr?: FactorQr;
}

/**
 * The thin SVD of G = inputᵀ·delta (rows×cols) through QRs of the factors
 * and the SVD of their small core.
 *
 * Each factor taller than the batch first tries the Gram route (CholeskyQR,
 * core/linalg/gramCholesky.ts), and keeps it if the a-posteriori bound on its
 * vectors' orthonormality is at most GRAM_ROUTE_TOLERANCE; otherwise (and for
 * factors no taller than the batch) Householder. Examples whose input or
 * delta row is zero add nothing to G and are left out first; repeated
 * examples are counted, not repeated (distinctExamples).
 */
export function factoredSvd(
  factors: GradientFactors,
  rows: number,
  cols: number,
  options: FactoredSvdOptions = {},
): FactoredSvdDetails {
  const sparse = factorRows(factors, rows, cols);
  const contributing = contributingExamples(sparse);
  if (contributing.length === 0) return emptySvd(rows, cols);
  const { examples, counts } = distinctExamples(sparse, contributing);
  const inner = examples.length;
  const kept = (all: SparseRows) => (inner === factors.batch ? all : selectSparseRows(all, examples));
  const allowGram = options.qr !== 'householder';
  let left = (allowGram && gramSide(kept(sparse.input), rows, inner)) || householderSide(factors.input, rows, examples);
  let right =
    (allowGram && gramSide(kept(sparse.delta), cols, inner)) || householderSide(factors.delta, cols, examples);
  for (;;) {
    const pl = left.p;
    const pr = right.p;
    const core = coreProduct(left, right, inner, counts);
    // The directions that will be cut off below need no orthogonality among themselves (SvdOptions.negligibleNorm).
    let coreNormSq = 0;
    for (let k = 0; k < core.length; k++) coreNormSq += core[k]! * core[k]!;
    const negligibleNorm = LOW_RANK_RELATIVE_TOLERANCE * Math.sqrt(coreNormSq);
    const small = svdGramJacobi(core, pl, pr, { tolerance: CORE_TOLERANCE, negligibleNorm });
    let total = 0;
    for (let k = 0; k < small.rank; k++) total += small.singularValues[k]! ** 2;
    const cutoff = LOW_RANK_RELATIVE_TOLERANCE * Math.sqrt(total);
    let rank = 0;
    while (rank < small.rank && small.singularValues[rank]! > cutoff) rank++;
    // A Gram side whose vectors might be off by more than the tolerance is redone by Householder.
    const leftBound = left.bound(small.u, small.r, rank);
    const rightBound = right.bound(small.v, small.r, rank);
    if (options.qr !== 'gram' && (leftBound > GRAM_ROUTE_TOLERANCE || rightBound > GRAM_ROUTE_TOLERANCE)) {
      if (leftBound > GRAM_ROUTE_TOLERANCE) left = householderSide(factors.input, rows, examples);
      if (rightBound > GRAM_ROUTE_TOLERANCE) right = householderSide(factors.delta, cols, examples);
      continue;
    }
    let residual = 0;
    for (let k = rank; k < small.rank; k++) residual += small.singularValues[k]! ** 2;
    return new LiftedTriplets(left, right, small, rank, residual, rows, cols, inner);
  }
}

/**
 * The core R_L·C·R_Rᵀ (pl×pr, in CORE's scratch), C = diag(counts) the
 * multiplicity of each distinct example (the identity when counts is null).
 * Both R are upper trapezoidal, so entry (i, j) sums over b ≥ max(i, j);
 * four j share one pass over row i of R_L from b = max(i, j₀), a lane's
 * terms below its own diagonal being exact zeros (x·0 added to +0 leaves
 * +0), so every sum is the one taken alone, term for term.
 */
function coreProduct(left: Side, right: Side, inner: number, counts: Float64Array | null): Float64Array {
  const pl = left.p;
  const pr = right.p;
  const l = counts === null ? left.r : countedColumns(left.r, pl, inner, counts);
  const r = right.r;
  const core = CORE.zeroed(pl * pr);
  for (let i = 0; i < pl; i++) {
    const li = i * inner;
    let j = 0;
    for (; j + 4 <= pr; j += 4) {
      const start = Math.max(i, j);
      fourDots(l, li + start, r, j * inner + start, inner, inner - start, FOUR);
      core.set(FOUR, i * pr + j);
    }
    for (; j < pr; j++) {
      let s = 0;
      for (let b = Math.max(i, j); b < inner; b++) s += l[li + b]! * r[j * inner + b]!;
      core[i * pr + j] = s;
    }
  }
  return core;
}

/**
 * The triplets of the core's SVD lifted to G: u = Q_L·U_c eₖ, v = Q_R·V_c eₖ.
 * This and the two sides are classes rather than closures made per call: a
 * worker makes a few every round, and V8 holds a closure's optimised code
 * only weakly once the closure is gone, so each major collection sent the
 * next round's closures (Q·y over the factor's non-zeros among them) back to
 * the interpreter until they were recompiled (docs/design.md,
 * "The CPU step's speed").
 */
class LiftedTriplets implements FactoredSvdDetails {
  readonly singularValues: Float64Array;
  readonly qr: readonly [FactorQr, FactorQr];
  readonly #left: Side;
  readonly #right: Side;
  readonly #small: SvdResult;
  readonly #yLeft: Float64Array;
  readonly #yRight: Float64Array;

  constructor(
    left: Side,
    right: Side,
    small: SvdResult,
    readonly rank: number,
    readonly residual: number,
    readonly rows: number,
    readonly cols: number,
    readonly examples: number,
  ) {
    this.singularValues = small.singularValues.slice(0, rank);
    this.qr = [left.method, right.method];
    this.#left = left;
    this.#right = right;
    this.#small = small;
    this.#yLeft = new Float64Array(left.p);
    this.#yRight = new Float64Array(right.p);
  }

  leftVector(k: number, out: Float64Array): Float64Array {
    return this.#lift(k, this.#small.u, this.#yLeft, this.#left, out);
  }

  rightVector(k: number, out: Float64Array): Float64Array {
    return this.#lift(k, this.#small.v, this.#yRight, this.#right, out);
  }

  materialise(): SvdResult {
    const { rows, cols, rank } = this;
    const u = new Float64Array(rows * rank);
    const v = new Float64Array(cols * rank);
    const colU = new Float64Array(rows);
    const colV = new Float64Array(cols);
    for (let k = 0; k < rank; k++) {
      this.leftVector(k, colU).forEach((x, i) => (u[i * rank + k] = x));
      this.rightVector(k, colV).forEach((x, j) => (v[j * rank + k] = x));
    }
    const { sweeps, converged } = this.#small;
    return { rows, cols, r: rank, u, singularValues: this.singularValues.slice(), v, rank, sweeps, converged };
  }

  /** Column k of the core's U_c (or V_c), `coefficients` p×width row-major, through its side's Q. */
  #lift(k: number, coefficients: Float64Array, y: Float64Array, side: Side, out: Float64Array): Float64Array {
    if (!Number.isInteger(k) || k < 0 || k >= this.rank)
      throw new RangeError(`factoredSvd: triplet ${k} of ${this.rank}`);
    const width = this.#small.r;
    for (let i = 0; i < y.length; i++) y[i] = coefficients[i * width + k]!;
    return side.vector(y, out);
  }
}

/** G = 0: no triplets. */
function emptySvd(rows: number, cols: number): FactoredSvdDetails {
  const none = (k: number): Float64Array => {
    throw new RangeError(`factoredSvd: triplet ${k} of 0`);
  };
  const empty = new Float64Array(0);
  return {
    rows,
    cols,
    rank: 0,
    singularValues: empty,
    residual: 0,
    leftVector: none,
    rightVector: none,
    materialise: () => ({
      rows,
      cols,
      r: 0,
      u: empty,
      singularValues: empty,
      v: empty,
      rank: 0,
      sweeps: 0,
      converged: true,
    }),
    qr: ['householder', 'householder'],
    examples: 0,
  };
}

/** One factor's thin QR, Fᵀ = Q·R, as the core and the vectors use it. */
interface Side {
  readonly method: FactorQr;
  /** Rows of R (columns of Q). */
  readonly p: number;
  /** p×B row-major, zero below the diagonal. */
  readonly r: Float64Array;
  /** out (the factor's full length, 0 on its zero columns) = Q·y. */
  vector(y: Float64Array, out: Float64Array): Float64Array;
  /**
   * The largest bound on |(Qyₖ)·(Qyₖ) − 1| over the first `count` columns yₖ of the row-major p×width `y` (0
   * for Householder).
   */
  bound(y: Float64Array, width: number, count: number): number;
}

/**
 * The Gram route for a factor taller than the batch; null when it is not (Householder is cheap then) or Cholesky breaks
 * down.
 */
function gramSide(factor: SparseRows, size: number, inner: number): Side | null {
  if (size <= inner) return null;
  const qr = gramCholeskyOfRows(factor, size);
  return qr === null ? null : new GramSide(qr, inner);
}

/** One factor's thin QR by the Gram route (see LiftedTriplets on why a class). */
class GramSide implements Side {
  readonly method = 'gram';
  readonly p: number;
  readonly r: Float64Array;
  readonly #qr: GramCholesky;
  readonly #z: Float64Array;
  readonly #column: Float64Array;

  constructor(qr: GramCholesky, inner: number) {
    this.p = inner;
    this.r = qr.r;
    this.#qr = qr;
    this.#z = new Float64Array(inner);
    this.#column = new Float64Array(inner);
  }

  vector(y: Float64Array, out: Float64Array): Float64Array {
    return this.#qr.combine(this.#qr.solve(y, this.#z), out);
  }

  bound(y: Float64Array, width: number, count: number): number {
    const inner = this.p;
    const qr = this.#qr;
    // One bound for all the vectors first (a triangular inverse); a solve per vector only where it is too loose.
    let yNorm = 0;
    for (let k = 0; k < count; k++) {
      let sum = 0;
      for (let i = 0; i < inner; i++) sum += y[i * width + k]! ** 2;
      yNorm = Math.max(yNorm, Math.sqrt(sum));
    }
    const uniform = qr.uniformNormBound(yNorm);
    if (uniform <= GRAM_ROUTE_TOLERANCE) return uniform;
    const column = this.#column;
    let worst = 0;
    for (let k = 0; k < count; k++) {
      for (let i = 0; i < inner; i++) column[i] = y[i * width + k]!;
      worst = Math.max(worst, qr.normBound(column, qr.solve(column, this.#z)));
    }
    return Math.min(uniform, worst);
  }
}

/** Householder QR of the factor's non-zero columns (core/linalg/householderQr.ts). */
function householderSide(factor: Float32Array, size: number, examples: Uint32Array): Side {
  const compact = compactRows(factor, size, examples);
  return new HouseholderSide(householderQr(compact.packed, compact.active.length, examples.length), compact.active);
}

/** One factor's thin QR by Householder, on its non-zero columns `active`. */
class HouseholderSide implements Side {
  readonly method = 'householder';
  readonly p: number;
  readonly r: Float64Array;
  readonly #qr: ThinQr;
  readonly #active: Uint32Array;
  readonly #packed: Float64Array;

  constructor(qr: ThinQr, active: Uint32Array) {
    this.p = qr.p;
    this.r = qr.r;
    this.#qr = qr;
    this.#active = active;
    this.#packed = new Float64Array(active.length);
  }

  vector(y: Float64Array, out: Float64Array): Float64Array {
    return scatter(applyQ(this.#qr, y, this.#packed), this.#active, out);
  }

  bound(): number {
    return 0;
  }
}

/** R_L·C: column b of the row-major p×inner R_L times counts[b] (a copy: R_L stays the side's own). */
function countedColumns(r: Float64Array, p: number, inner: number, counts: Float64Array): Float64Array {
  const scaled = new Float64Array(p * inner);
  for (let i = 0; i < p; i++) {
    for (let b = 0; b < inner; b++) scaled[i * inner + b] = r[i * inner + b]! * counts[b]!;
  }
  return scaled;
}

/**
 * The distinct examples among `examples`, and how many times each occurs
 * (null: all distinct). An example drawn twice into one minibatch (a batch
 * that straddles two epochs of its shard, core/data/minibatch.ts) has the
 * same input row and the same delta row both times, so it adds the same
 * term x·δᵀ to G twice: G = Σ over distinct examples of count·x·δᵀ, and the
 * core weighs each by its count. Kept twice instead, it makes both Grams
 * singular and sends the round to Householder, code the worker otherwise
 * runs a few rounds in a thousand, and so runs cold. Candidates are paired
 * by their numbers of non-zeros first; a pair is the same only if every
 * index and float32 value of both rows is.
 */
function distinctExamples(
  { input, delta }: FactorRows,
  examples: Uint32Array,
): { examples: Uint32Array; counts: Float64Array | null } {
  let counts: Float64Array | null = null;
  const kept = new Uint32Array(examples.length);
  let distinct = 0;
  for (let e = 0; e < examples.length; e++) {
    const b = examples[e]!;
    let twin = 0;
    while (twin < distinct && !(sameRow(input, kept[twin]!, b) && sameRow(delta, kept[twin]!, b))) twin++;
    if (twin === distinct) {
      kept[distinct++] = b;
      continue;
    }
    counts ??= new Float64Array(examples.length).fill(1);
    counts[twin]! += 1;
  }
  if (counts === null) return { examples, counts };
  return { examples: kept.slice(0, distinct), counts: counts.slice(0, distinct) };
}

/** Whether rows a and b of sparse rows hold the same non-zeros (indices and values). */
function sameRow(rows: SparseRows, a: number, b: number): boolean {
  const { rowStart, index, value } = rows;
  const startA = rowStart[a]!;
  const startB = rowStart[b]!;
  const length = rowStart[a + 1]! - startA;
  if (rowStart[b + 1]! - startB !== length) return false;
  for (let t = 0; t < length; t++) {
    if (index[startA + t] !== index[startB + t] || value[startA + t] !== value[startB + t]) return false;
  }
  return true;
}

/** The examples b whose input row and delta row both have a non-zero: the others add 0 to G = Σ_b x_b δ_bᵀ. */
function contributingExamples({ input, delta }: FactorRows): Uint32Array {
  const kept: number[] = [];
  const batch = input.rowStart.length - 1;
  for (let b = 0; b < batch; b++) {
    if (input.rowStart[b + 1]! > input.rowStart[b]! && delta.rowStart[b + 1]! > delta.rowStart[b]!) kept.push(b);
  }
  return Uint32Array.from(kept);
}

/** A factor's non-zero rows (as columns of the transposed factor), packed column-major active×inner. */
interface CompactRows {
  readonly active: Uint32Array;
  readonly packed: Float64Array;
}

/**
 * Packs, for the rows `examples` of the row-major factor (B×size), the
 * columns i that are non-zero in some kept row. At least one is kept, so the
 * QR has a shape.
 */
function compactRows(factor: Float32Array, size: number, examples: Uint32Array): CompactRows {
  const inner = examples.length;
  const used = new Uint8Array(size);
  let count = 0;
  for (let b = 0; b < inner; b++) {
    const base = examples[b]! * size;
    for (let i = 0; i < size; i++) {
      if (factor[base + i] !== 0 && used[i] === 0) {
        used[i] = 1;
        count++;
      }
    }
  }
  if (count === 0) {
    used[0] = 1;
    count = 1;
  }
  const active = new Uint32Array(count);
  for (let i = 0, c = 0; i < size; i++) if (used[i] === 1) active[c++] = i;
  const packed = new Float64Array(count * inner);
  for (let b = 0; b < inner; b++) {
    const base = examples[b]! * size;
    const out = b * count;
    for (let c = 0; c < count; c++) packed[out + c] = factor[base + active[c]!]!;
  }
  return { active, packed };
}

/** out = the packed vector spread to its active indices, 0 elsewhere. */
function scatter(packed: Float64Array, active: Uint32Array, out: Float64Array): Float64Array {
  out.fill(0);
  for (let c = 0; c < active.length; c++) out[active[c]!] = packed[c]!;
  return out;
}
