/**
 * The SVD of a gradient given as a product of two thin factors, G = Xᵀ·Δ,
 * without ever forming G.
 *
 * A dense layer's minibatch gradient is G = Xᵀ·Δ: X, the layer's input
 * (batch×rows), and Δ, its output delta (batch×cols, already divided by
 * the batch size). With thin QRs Xᵀ = Q_x R_x and Δᵀ = Q_Δ R_Δ (Householder,
 * core/linalg/householderQr.ts),
 *
 *   G = Q_x (R_x R_Δᵀ) Q_Δᵀ,  and with the small core R_x R_Δᵀ = U_c Σ V_cᵀ,
 *   U = Q_x U_c,  V = Q_Δ V_c.
 *
 * The core is at most batch×batch (32×32 for the MLP), so its one-sided
 * Jacobi SVD (core/linalg/svd.ts) is cheap, and a singular vector costs one
 * application of Q (4·rows·batch flops): only the atoms actually sent are
 * ever formed. For a 784×128 gradient at batch 32 this replaces a pivoted QR
 * of the whole 784×128 matrix by two QRs of 784×32 and 128×32 factors.
 *
 * Directions with σ ≤ LOW_RANK_RELATIVE_TOLERANCE·‖G‖_F are left out, as in
 * svdLowRank: they would get sampling probabilities of order 10⁻⁶.
 */
import { applyQ, householderQr } from './householderQr';
import { LOW_RANK_RELATIVE_TOLERANCE } from './lowRankSvd';
import { svdJacobi, type SvdResult } from './svd';

/**
 * The factors of a dense layer's weight gradient G = Xᵀ·Δ (rows = inputs m,
 * cols = outputs n): its rank is at most the batch size B, so a spectral
 * compressor can take its SVD from these instead of from the m × n matrix.
 */
export interface GradientFactors {
  /** X: the layer input, B × m, example-major. */
  readonly input: Float32Array;
  /** Δ: d(mean loss)/d(pre-activation) of the layer's output, B × n, example-major. */
  readonly delta: Float32Array;
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
  /** Writes uₖ (rows values) into `out`. */
  leftVector(k: number, out: Float64Array): Float64Array;
  /** Writes vₖ (cols values) into `out`. */
  rightVector(k: number, out: Float64Array): Float64Array;
  /** The same triplets in svdJacobi's layout (u rows×rank, v cols×rank): for tests and diagnostics, it forms every vector. */
  materialise(): SvdResult;
}

/** Checks that `factors` can be the factors of a rows×cols gradient, and that they are finite. */
export function checkFactors(factors: GradientFactors, rows: number, cols: number): void {
  const { batch, input, delta } = factors;
  if (!Number.isInteger(batch) || batch < 1) throw new RangeError(`gradient factors: batch ${batch} is not a positive integer`);
  if (input.length !== batch * rows)
    throw new RangeError(`gradient factors: input has ${input.length} values, a ${batch}×${rows} factor needs ${batch * rows}`);
  if (delta.length !== batch * cols)
    throw new RangeError(`gradient factors: delta has ${delta.length} values, a ${batch}×${cols} factor needs ${batch * cols}`);
  for (const [name, a] of [
    ['input', input],
    ['delta', delta],
  ] as const) {
    for (let i = 0; i < a.length; i++) if (!Number.isFinite(a[i]!)) throw new RangeError(`gradient factors: ${name}[${i}] is ${a[i]}`);
  }
}

/** The thin SVD of G = inputᵀ·delta (rows×cols) through QRs of the factors and the SVD of their small core. */
export function factoredSvd(factors: GradientFactors, rows: number, cols: number): FactoredSvd {
  checkFactors(factors, rows, cols);
  const inner = factors.batch;
  // X, row-major batch×rows, is Xᵀ column-major rows×batch. Rows of G whose
  // factor row is zero for every example (a pixel blank across the batch, a
  // unit no example activates) are zero rows of G: the QR skips them and the
  // singular vectors have 0 there.
  const left = compactRows(factors.input, rows, inner);
  const right = compactRows(factors.delta, cols, inner);
  const qrLeft = householderQr(left.packed, left.active.length, inner);
  const qrRight = householderQr(right.packed, right.active.length, inner);
  const pl = qrLeft.p;
  const pr = qrRight.p;
  // core = R_L·R_Rᵀ (pl×pr); both are upper trapezoidal, so the sum starts at max(i, j).
  const core = new Float64Array(pl * pr);
  for (let i = 0; i < pl; i++) {
    for (let j = 0; j < pr; j++) {
      let s = 0;
      for (let b = Math.max(i, j); b < inner; b++) s += qrLeft.r[i * inner + b]! * qrRight.r[j * inner + b]!;
      core[i * pr + j] = s;
    }
  }
  const small = svdJacobi(core, pl, pr);
  let total = 0;
  for (let k = 0; k < small.rank; k++) total += small.singularValues[k]! ** 2;
  const cutoff = LOW_RANK_RELATIVE_TOLERANCE * Math.sqrt(total);
  let rank = 0;
  while (rank < small.rank && small.singularValues[rank]! > cutoff) rank++;
  const singularValues = small.singularValues.slice(0, rank);
  const width = small.r;
  const yLeft = new Float64Array(pl);
  const yRight = new Float64Array(pr);
  const packedLeft = new Float64Array(left.active.length);
  const packedRight = new Float64Array(right.active.length);

  const checkIndex = (k: number) => {
    if (!Number.isInteger(k) || k < 0 || k >= rank) throw new RangeError(`factoredSvd: triplet ${k} of ${rank}`);
  };
  const leftVector = (k: number, out: Float64Array) => {
    checkIndex(k);
    for (let i = 0; i < pl; i++) yLeft[i] = small.u[i * width + k]!;
    return scatter(applyQ(qrLeft, yLeft, packedLeft), left.active, out);
  };
  const rightVector = (k: number, out: Float64Array) => {
    checkIndex(k);
    for (let j = 0; j < pr; j++) yRight[j] = small.v[j * width + k]!;
    return scatter(applyQ(qrRight, yRight, packedRight), right.active, out);
  };
  const materialise = (): SvdResult => {
    const u = new Float64Array(rows * rank);
    const v = new Float64Array(cols * rank);
    const colU = new Float64Array(rows);
    const colV = new Float64Array(cols);
    for (let k = 0; k < rank; k++) {
      leftVector(k, colU).forEach((x, i) => (u[i * rank + k] = x));
      rightVector(k, colV).forEach((x, j) => (v[j * rank + k] = x));
    }
    return { rows, cols, r: rank, u, singularValues: singularValues.slice(), v, rank, sweeps: small.sweeps, converged: small.converged };
  };
  return { rows, cols, rank, singularValues, leftVector, rightVector, materialise };
}

/** A factor's non-zero rows (as columns of the transposed factor), packed column-major active×inner. */
interface CompactRows {
  readonly active: Uint32Array;
  readonly packed: Float64Array;
}

/** Packs the columns i of the inner×size row-major factor that are non-zero in some row. At least one is kept, so the QR has a shape. */
function compactRows(factor: Float32Array, size: number, inner: number): CompactRows {
  const used = new Uint8Array(size);
  let count = 0;
  for (let b = 0; b < inner; b++) {
    const base = b * size;
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
    const base = b * size;
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
