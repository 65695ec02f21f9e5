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
 * Computed as two dense matrix products (O(m·n·(m + n))), in float64.
 */

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

/** C = D_m G D_nᵀ for a row-major rows×cols G. */
export function dct2(g: ArrayLike<number>, rows: number, cols: number): Float64Array {
  checkSize('dct2', g.length, rows, cols);
  const dm = dctMatrix(rows);
  const dn = dctMatrix(cols);
  // T = G D_nᵀ: T[i, l] = Σⱼ G[i, j] D_n[l, j] (contiguous dot products).
  const t = new Float64Array(rows * cols);
  for (let i = 0; i < rows; i++) {
    const row = i * cols;
    for (let l = 0; l < cols; l++) {
      const basis = l * cols;
      let sum = 0;
      for (let j = 0; j < cols; j++) sum += g[row + j]! * dn[basis + j]!;
      t[row + l] = sum;
    }
  }
  // C = D_m T: row k of C accumulates D_m[k, i] · row i of T.
  const c = new Float64Array(rows * cols);
  for (let k = 0; k < rows; k++) {
    const out = k * cols;
    for (let i = 0; i < rows; i++) {
      const a = dm[k * rows + i]!;
      const row = i * cols;
      for (let l = 0; l < cols; l++) c[out + l] = c[out + l]! + a * t[row + l]!;
    }
  }
  return c;
}

/**
 * G = D_mᵀ C D_n for a row-major rows×cols coefficient matrix C. Zero
 * coefficients and all-zero rows are skipped, so a sparse C (a sample of a
 * few atoms) costs O(nnz·cols + nonzero rows·rows·cols).
 */
export function idct2(c: ArrayLike<number>, rows: number, cols: number): Float64Array {
  checkSize('idct2', c.length, rows, cols);
  const dm = dctMatrix(rows);
  const dn = dctMatrix(cols);
  // T = C D_n: row k of T is Σₗ C[k, l] · row l of D_n.
  const t = new Float64Array(rows * cols);
  const nonZeroRows: number[] = [];
  for (let k = 0; k < rows; k++) {
    const row = k * cols;
    let any = false;
    for (let l = 0; l < cols; l++) {
      const coefficient = c[row + l]!;
      if (coefficient === 0) continue;
      any = true;
      const basis = l * cols;
      for (let j = 0; j < cols; j++) t[row + j] = t[row + j]! + coefficient * dn[basis + j]!;
    }
    if (any) nonZeroRows.push(k);
  }
  // G = D_mᵀ T: row i of G is Σₖ D_m[k, i] · row k of T.
  const g = new Float64Array(rows * cols);
  for (const k of nonZeroRows) {
    const row = k * cols;
    for (let i = 0; i < rows; i++) {
      const a = dm[k * rows + i]!;
      const out = i * cols;
      for (let j = 0; j < cols; j++) g[out + j] = g[out + j]! + a * t[row + j]!;
    }
  }
  return g;
}

function checkSize(name: string, length: number, rows: number, cols: number): void {
  if (!Number.isInteger(rows) || !Number.isInteger(cols) || rows < 1 || cols < 1 || length !== rows * cols) {
    throw new RangeError(`${name}: ${length} values do not form a ${rows}×${cols} matrix`);
  }
}
