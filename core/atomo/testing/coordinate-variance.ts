/**
 * Exact per-coordinate variances Var(ĝⱼ) of each scheme, for the standard
 * errors of the Monte-Carlo tests. Summed over j they give the closed-form
 * E‖ĝ − g‖² the schemes report; the tests check that too.
 */
import { dctMatrix } from '../../linalg/dct';
import type { SpectralDecomposition } from '../decompositions/spectral';

/** Entry-wise ATOMO: Var(ĝⱼ) = gⱼ²(1/pⱼ − 1). */
export function entrywiseCoordinateVariance(grad: Float32Array, probabilities: Float64Array): Float64Array {
  return Float64Array.from(grad, (g, j) => (g === 0 ? 0 : g * g * (1 / probabilities[j]! - 1)));
}

/** Spectral ATOMO, independent atoms: Var(ĝᵢⱼ) = Σₖ σₖ² uᵢₖ² vⱼₖ² (1/pₖ − 1). */
export function spectralCoordinateVariance(
  decomposition: SpectralDecomposition,
  probabilities: Float64Array,
): Float64Array {
  const [rows, cols] = decomposition.shape;
  const { u, v, r } = decomposition.svd;
  const out = new Float64Array(rows * cols);
  decomposition.coefficients.forEach((sigma, k) => {
    const weight = sigma * sigma * (1 / probabilities[k]! - 1);
    for (let i = 0; i < rows; i++) {
      const left = weight * u[i * r + k]! ** 2;
      for (let j = 0; j < cols; j++) out[i * cols + j] = out[i * cols + j]! + left * v[j * r + k]! ** 2;
    }
  });
  return out;
}

/**
 * s-level QSGD in buckets of d entries (d = 0: one bucket): Var(ĝⱼ) =
 * (‖g_k‖/s)² f(1 − f), f the fractional part of s|gⱼ|/‖g_k‖, k the bucket
 * of j (‖g_k‖ as float32, as sent).
 */
export function qsgdCoordinateVariance(grad: Float32Array, levels: number, bucketSize = 0): Float64Array {
  const d = bucketSize === 0 ? grad.length : bucketSize;
  const out = new Float64Array(grad.length);
  for (let start = 0; start < grad.length; start += d) {
    const bucket = grad.subarray(start, Math.min(grad.length, start + d));
    let sum = 0;
    for (const g of bucket) sum += g * g;
    const norm = Math.fround(Math.sqrt(sum));
    bucket.forEach((g, i) => {
      if (norm === 0) return;
      const position = (levels * Math.abs(g)) / norm;
      const f = position - Math.floor(position);
      out[start + i] = (norm / levels) ** 2 * f * (1 - f);
    });
  }
  return out;
}

/**
 * TernGrad's clipped gradient ĉ: g clipped to ±T, T = c·σ rounded to float32, σ = √(mean (gⱼ − ḡ)²), computed here
 * on its own (not with the scheme's code) for the tests to check against.
 */
export function terngradClipped(grad: Float32Array, clip: number): Float32Array {
  const mean = grad.reduce((a, b) => a + b, 0) / grad.length;
  const sigma = Math.sqrt(grad.reduce((a, b) => a + (b - mean) ** 2, 0) / grad.length);
  const threshold = Math.fround(clip * sigma);
  return grad.map((g) => Math.max(-threshold, Math.min(threshold, g)));
}

/** TernGrad: Var(ĝⱼ) = |gⱼ|(‖g‖∞ − |gⱼ|) (of ĉ, with ĉ for g, when it clips). */
export function terngradCoordinateVariance(grad: Float32Array): Float64Array {
  let scaler = 0;
  for (const g of grad) scaler = Math.max(scaler, Math.abs(g));
  return Float64Array.from(grad, (g) => Math.abs(g) * (scaler - Math.abs(g)));
}

/**
 * Fourier ATOMO, independent atoms d_k d_lᵀ: Var(ĝᵢⱼ) = Σₖₗ C[k,l]² (1/p − 1) D_m[k,i]² D_n[l,j]²,
 * C the DCT coefficients (atom order k·cols + l).
 */
export function dctCoordinateVariance(
  coefficients: Float64Array,
  probabilities: Float64Array,
  rows: number,
  cols: number,
): Float64Array {
  const dm = dctMatrix(rows);
  const dn = dctMatrix(cols);
  const out = new Float64Array(rows * cols);
  for (let k = 0; k < rows; k++) {
    for (let l = 0; l < cols; l++) {
      const c = coefficients[k * cols + l]!;
      if (c === 0) continue;
      const weight = c * c * (1 / probabilities[k * cols + l]! - 1);
      if (weight === 0) continue;
      for (let i = 0; i < rows; i++) {
        const left = weight * dm[k * rows + i]! ** 2;
        for (let j = 0; j < cols; j++) out[i * cols + j] = out[i * cols + j]! + left * dn[l * cols + j]! ** 2;
      }
    }
  }
  return out;
}
