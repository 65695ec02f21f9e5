/**
 * Four dot products that share one operand, in one pass: the kernel behind
 * the small dense factorisations of core/linalg (svd.ts, symmetricEigen.ts,
 * lowRankSvd.ts, factoredSvd.ts). A single dot product waits on one chain
 * of additions; four independent ones overlap those latencies. Each is still
 * summed term by term in index order, so each value is exactly the one a
 * plain loop gives.
 */

/**
 * out[k] = Σ_{i < length} x[xAt + i]·y[yAt + k·stride + i] for k = 0…3, each
 * sum in i order (out needs 4 places; y must hold all four runs).
 */
export function fourDots(
  x: Float64Array,
  xAt: number,
  y: Float64Array,
  yAt: number,
  stride: number,
  length: number,
  out: Float64Array,
): void {
  const twice = 2 * stride;
  const thrice = 3 * stride;
  let d0 = 0;
  let d1 = 0;
  let d2 = 0;
  let d3 = 0;
  for (let i = 0, o = yAt; i < length; i++, o++) {
    const v = x[xAt + i]!;
    d0 += v * y[o]!;
    d1 += v * y[o + stride]!;
    d2 += v * y[o + twice]!;
    d3 += v * y[o + thrice]!;
  }
  out[0] = d0;
  out[1] = d1;
  out[2] = d2;
  out[3] = d3;
}
