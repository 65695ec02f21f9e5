/**
 * The orthonormal DCT-II in two dimensions, the CPU reference for Fourier
 * atoms (docs/design.md, "Fourier atoms").
 *
 * The n-point orthonormal DCT-II matrix is
 *   Dₙ[k, i] = αₖ cos(π(2i + 1)k / 2n),  α₀ = √(1/n), αₖ = √(2/n) for k ≥ 1,
 * an orthogonal matrix (Dₙ Dₙᵀ = I). A rows×cols matrix G has coefficients
 * C = D_m G D_nᵀ and is recovered as G = D_mᵀ C D_n. Each coefficient C[k, l]
 * is the coordinate of G on the atom d_k d_lᵀ (rows k of D_m and l of D_n),
 * and these m·n atoms are orthonormal in the Frobenius inner product, so
 * ‖C‖_F = ‖G‖_F.
 *
 * Computed with fast transforms along rows and columns (O(m·n·log)), in
 * float64; dctMatrix is the definition, kept for the tests.
 */
import { fft } from './fft';

const bases = new Map<number, Float64Array>();

/** The n×n orthonormal DCT-II matrix, row-major (row k is the k-th cosine), cached per n. */
export function dctMatrix(n: number): Float64Array {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`dctMatrix: size must be a positive integer, got ${n}`);
  const cached = bases.get(n);
  if (cached) return cached;
  const d = new Float64Array(n * n);
  for (let k = 0; k < n; k++) {
    const alpha = Math.sqrt((k === 0 ? 1 : 2) / n);
    for (let i = 0; i < n; i++) d[k * n + i] = alpha * Math.cos((Math.PI * (2 * i + 1) * k) / (2 * n));
  }
  bases.set(n, d);
  return d;
}

/** C = D_m G D_nᵀ for a row-major rows×cols G: a fast DCT along each row, then along each column. */
export function dct2(g: ArrayLike<number>, rows: number, cols: number): Float64Array {
  return separable('dct2', g, rows, cols, dctInPlace);
}

/** G = D_mᵀ C D_n for a row-major rows×cols coefficient matrix C (the inverse of dct2). */
export function idct2(c: ArrayLike<number>, rows: number, cols: number): Float64Array {
  return separable('idct2', c, rows, cols, idctInPlace);
}

type Transform1d = (x: Float64Array, work: FftWork) => void;

/** A 1-D transform applied along every row and then every column of a copy of `a`. */
function separable(
  name: string,
  a: ArrayLike<number>,
  rows: number,
  cols: number,
  transform: Transform1d,
): Float64Array {
  checkSize(name, a.length, rows, cols);
  const out = Float64Array.from(a);
  alongRows(out, rows, cols, transform);
  alongColumns(out, rows, cols, transform);
  return out;
}

function alongRows(a: Float64Array, rows: number, cols: number, transform: Transform1d): void {
  const work = fftWork(cols);
  for (let i = 0; i < rows; i++) transform(a.subarray(i * cols, (i + 1) * cols), work);
}

function alongColumns(a: Float64Array, rows: number, cols: number, transform: Transform1d): void {
  const work = fftWork(rows);
  const column = new Float64Array(rows);
  for (let j = 0; j < cols; j++) {
    for (let i = 0; i < rows; i++) column[i] = a[i * cols + j]!;
    transform(column, work);
    for (let i = 0; i < rows; i++) a[i * cols + j] = column[i]!;
  }
}

/** Buffers and the phase factors e^{−iπk/2n} of one transform length. */
interface FftWork {
  readonly re: Float64Array;
  readonly im: Float64Array;
  readonly cos: Float64Array; // cos(πk/2n)
  readonly sin: Float64Array; // sin(πk/2n)
  readonly alpha: Float64Array; // αₖ
}

function fftWork(n: number): FftWork {
  const cos = new Float64Array(n);
  const sin = new Float64Array(n);
  const alpha = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    cos[k] = Math.cos((Math.PI * k) / (2 * n));
    sin[k] = Math.sin((Math.PI * k) / (2 * n));
    alpha[k] = Math.sqrt((k === 0 ? 1 : 2) / n);
  }
  return { re: new Float64Array(n), im: new Float64Array(n), cos, sin, alpha };
}

/**
 * Orthonormal DCT-II of x in place, through one complex FFT of the same
 * length (Makhoul 1980): v = (x₀, x₂, x₄, …, x₅, x₃, x₁), V = DFT(v), and
 * Σⱼ xⱼ cos(π(2j+1)k/2n) = Re(e^{−iπk/2n} Vₖ).
 */
function dctInPlace(x: Float64Array, work: FftWork): void {
  const n = x.length;
  const { re, im, cos, sin, alpha } = work;
  for (let j = 0; 2 * j < n; j++) re[j] = x[2 * j]!;
  for (let j = 0; 2 * j + 1 < n; j++) re[n - 1 - j] = x[2 * j + 1]!;
  im.fill(0);
  fft(re, im);
  for (let k = 0; k < n; k++) x[k] = alpha[k]! * (re[k]! * cos[k]! + im[k]! * sin[k]!);
}

/**
 * Orthonormal DCT-III (the inverse of dctInPlace) in place. With Yₖ = Xₖ/αₖ
 * the unnormalised DCT-II values and Y_n = 0, Vₖ = e^{iπk/2n}(Yₖ − iY_{n−k})
 * is the DFT of the real permuted vector v, so v = Re(IDFT(V)) and x is v
 * unpermuted.
 */
function idctInPlace(x: Float64Array, work: FftWork): void {
  const n = x.length;
  const { re, im, cos, sin, alpha } = work;
  for (let k = 0; k < n; k++) {
    const y = x[k]! / alpha[k]!;
    const yMirror = k === 0 ? 0 : x[n - k]! / alpha[n - k]!;
    // e^{iθ}(y − i·yMirror) = (y cosθ + yMirror sinθ) + i(y sinθ − yMirror cosθ);
    // conjugated here, for IDFT(V) = conj(DFT(conj V))/n.
    re[k] = y * cos[k]! + yMirror * sin[k]!;
    im[k] = -(y * sin[k]! - yMirror * cos[k]!);
  }
  fft(re, im);
  for (let j = 0; 2 * j < n; j++) x[2 * j] = re[j]! / n;
  for (let j = 0; 2 * j + 1 < n; j++) x[2 * j + 1] = re[n - 1 - j]! / n;
}

function checkSize(name: string, length: number, rows: number, cols: number): void {
  if (!Number.isInteger(rows) || !Number.isInteger(cols) || rows < 1 || cols < 1 || length !== rows * cols) {
    throw new RangeError(`${name}: ${length} values do not form a ${rows}×${cols} matrix`);
  }
}
