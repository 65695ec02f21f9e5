/**
 * Float32 matrix products for the CPU backend. Row-major matrices addressed
 * by (array, offset) so callers can work inside larger buffers without
 * creating views in the hot path. Both kernels accumulate into C (C += …);
 * callers zero or pre-fill C.
 *
 * Why these loop orders: V8 does not vectorise, so speed comes from touching
 * memory sequentially and doing several multiply-adds per load and store of
 * C. matmulAccumulate walks rows of B and C contiguously (i-k-j order) and
 * folds four rows of B into each pass over a row of C; it also skips zero
 * entries of A, which is most of an MNIST image and about half of a
 * post-ReLU activation.
 */

/** Indices and values of the non-zero entries of one row of op(A); grown on demand, never shrunk. */
let nonZeroIndex = new Int32Array(1024);
let nonZeroValue = new Float64Array(1024);

/**
 * The matrices of a product C[m × n] += A·B, each in an array at an offset
 * (in floats; 0 when left out). Named, so a call says which number is which;
 * the object a call allocates costs nothing next to the product.
 */
interface MatmulOperands {
  readonly c: Float32Array;
  readonly cOffset?: number;
  readonly a: Float32Array;
  readonly aOffset?: number;
  readonly b: Float32Array;
  readonly bOffset?: number;
  readonly m: number;
  readonly k: number;
  readonly n: number;
}

/**
 * C[m × n] += op(A)[m × k] · B[k × n], where op(A)[i, p] = a[aOffset + i·aRowStride + p·aColStride].
 * (aRowStride, aColStride) = (k, 1) reads A as stored; (1, m) reads the transpose of a stored k × m matrix.
 */
export function matmulAccumulate(
  operands: MatmulOperands & { readonly aRowStride: number; readonly aColStride: number },
): void {
  const { c, cOffset = 0, a, aOffset = 0, aRowStride, aColStride, b, bOffset = 0, m, k, n } = operands;
  if (nonZeroIndex.length < k) {
    nonZeroIndex = new Int32Array(k);
    nonZeroValue = new Float64Array(k);
  }
  const index = nonZeroIndex;
  const value = nonZeroValue;
  for (let i = 0; i < m; i++) {
    let count = 0;
    const aRow = aOffset + i * aRowStride;
    for (let p = 0; p < k; p++) {
      const entry = a[aRow + p * aColStride]!;
      if (entry !== 0) {
        index[count] = bOffset + p * n;
        value[count] = entry;
        count++;
      }
    }
    const cRow = cOffset + i * n;
    let t = 0;
    for (; t + 4 <= count; t += 4) {
      const a0 = value[t]!;
      const a1 = value[t + 1]!;
      const a2 = value[t + 2]!;
      const a3 = value[t + 3]!;
      const b0 = index[t]!;
      const b1 = index[t + 1]!;
      const b2 = index[t + 2]!;
      const b3 = index[t + 3]!;
      for (let j = 0; j < n; j++) {
        c[cRow + j] = c[cRow + j]! + a0 * b[b0 + j]! + a1 * b[b1 + j]! + a2 * b[b2 + j]! + a3 * b[b3 + j]!;
      }
    }
    for (; t < count; t++) {
      const a0 = value[t]!;
      const b0 = index[t]!;
      for (let j = 0; j < n; j++) c[cRow + j] = c[cRow + j]! + a0 * b[b0 + j]!;
    }
  }
}

/**
 * C[m × n] += A[m × k] · Bᵀ, with B stored n × k: every entry is a dot product
 * of two contiguous rows. Four rows of B share each load of A's row.
 */
export function matmulTransposedBAccumulate(operands: MatmulOperands): void {
  const { c, cOffset = 0, a, aOffset = 0, b, bOffset = 0, m, k, n } = operands;
  for (let i = 0; i < m; i++) {
    const aRow = aOffset + i * k;
    const cRow = cOffset + i * n;
    let j = 0;
    for (; j + 4 <= n; j += 4) {
      const b0 = bOffset + j * k;
      const b1 = b0 + k;
      const b2 = b1 + k;
      const b3 = b2 + k;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      for (let p = 0; p < k; p++) {
        const x = a[aRow + p]!;
        s0 += x * b[b0 + p]!;
        s1 += x * b[b1 + p]!;
        s2 += x * b[b2 + p]!;
        s3 += x * b[b3 + p]!;
      }
      c[cRow + j] = c[cRow + j]! + s0;
      c[cRow + j + 1] = c[cRow + j + 1]! + s1;
      c[cRow + j + 2] = c[cRow + j + 2]! + s2;
      c[cRow + j + 3] = c[cRow + j + 3]! + s3;
    }
    for (; j < n; j++) {
      const b0 = bOffset + j * k;
      let s0 = 0;
      for (let p = 0; p < k; p++) s0 += a[aRow + p]! * b[b0 + p]!;
      c[cRow + j] = c[cRow + j]! + s0;
    }
  }
}
