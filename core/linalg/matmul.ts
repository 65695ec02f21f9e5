/**
 * C ← α·op(A)·op(B) + β·C for batches of row-major f32 matrices: the CPU
 * reference (and specification) for shaders/matmul/tiled.wgsl.
 *
 * Layouts, all row-major and packed:
 *   op(A) is m×k. A is stored m×k, or k×m when transA (op(A) = Aᵀ).
 *   op(B) is k×n. B is stored k×n, or n×k when transB (op(B) = Bᵀ).
 *   C is m×n.
 * Matrix i of a batch starts at i·stride (in elements) of its array; a stride
 * of 0 repeats one matrix for every batch item (a shared weight).
 * The transpose flags let backward propagation use the forward weights as
 * they are: ∂L/∂X = Δ·Wᵀ (transB), ∂L/∂W = Xᵀ·Δ (transA).
 */

/** Shape and scaling of one (batched) matrix product. Omitted fields take the defaults below. */
export interface MatmulShape {
  /** Rows of op(A) and of C. */
  readonly m: number;
  /** Columns of op(B) and of C. */
  readonly n: number;
  /** Columns of op(A), rows of op(B): the length of each dot product. */
  readonly k: number;
  /** op(A) = Aᵀ, A stored k×m. Default false. */
  readonly transA?: boolean;
  /** op(B) = Bᵀ, B stored n×k. Default false. */
  readonly transB?: boolean;
  /** Number of products. Default 1. */
  readonly batch?: number;
  /** Elements between consecutive A matrices. Default m·k (packed); 0 broadcasts one A. */
  readonly strideA?: number;
  /** Elements between consecutive B matrices. Default k·n; 0 broadcasts one B. */
  readonly strideB?: number;
  /** Elements between consecutive C matrices. Default m·n. */
  readonly strideC?: number;
  /** Scale of the product. Default 1. */
  readonly alpha?: number;
  /** Scale of the old C; 0 (the default) overwrites C without reading it, so garbage or NaN there is harmless. */
  readonly beta?: number;
}

/** A MatmulShape with every default filled in and checked. */
export type ResolvedMatmulShape = { readonly [K in keyof MatmulShape]-?: NonNullable<MatmulShape[K]> };

function checkCount(name: string, value: number): void {
  if (!Number.isInteger(value) || value < 0)
    throw new RangeError(`matmul: ${name} must be a non-negative integer, got ${value}`);
}

/** Fills in the defaults of a MatmulShape and rejects negative or fractional sizes. */
export function resolveMatmulShape(shape: MatmulShape): ResolvedMatmulShape {
  const { m, n, k } = shape;
  const resolved: ResolvedMatmulShape = {
    m,
    n,
    k,
    transA: shape.transA ?? false,
    transB: shape.transB ?? false,
    batch: shape.batch ?? 1,
    strideA: shape.strideA ?? m * k,
    strideB: shape.strideB ?? k * n,
    strideC: shape.strideC ?? m * n,
    alpha: shape.alpha ?? 1,
    beta: shape.beta ?? 0,
  };
  for (const name of ['m', 'n', 'k', 'batch', 'strideA', 'strideB', 'strideC'] as const)
    checkCount(name, resolved[name]);
  return resolved;
}

/** Elements each of A, B and C must hold for a shape (0 when the batch is empty). */
export function matmulExtents(shape: MatmulShape): { a: number; b: number; c: number } {
  const s = resolveMatmulShape(shape);
  if (s.batch === 0) return { a: 0, b: 0, c: 0 };
  const last = s.batch - 1;
  return { a: last * s.strideA + s.m * s.k, b: last * s.strideB + s.k * s.n, c: last * s.strideC + s.m * s.n };
}

/**
 * C ← α·op(A)·op(B) + β·C in place, each dot product accumulated in Float64
 * and rounded to f32 once: the "exact" answer GPU kernels are measured against.
 */
export function matmul(shape: MatmulShape, a: Float32Array, b: Float32Array, c: Float32Array): void {
  const s = resolveMatmulShape(shape);
  const need = matmulExtents(s);
  if (a.length < need.a || b.length < need.b || c.length < need.c) {
    throw new RangeError(
      `matmul: arrays hold ${a.length}/${b.length}/${c.length} elements, the shape needs ${need.a}/${need.b}/${need.c}`,
    );
  }
  const { m, n, k, alpha, beta } = s;
  // Element (row, col) of op(A) is at a[baseA + row·rowA + col·colA]; likewise for B.
  const [rowA, colA] = s.transA ? [1, m] : [k, 1];
  const [rowB, colB] = s.transB ? [1, k] : [n, 1];
  for (let item = 0; item < s.batch; item++) {
    const baseA = item * s.strideA;
    const baseB = item * s.strideB;
    const baseC = item * s.strideC;
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let dot = 0;
        for (let p = 0; p < k; p++) dot += a[baseA + i * rowA + p * colA]! * b[baseB + p * rowB + j * colB]!;
        const at = baseC + i * n + j;
        c[at] = beta === 0 ? alpha * dot : alpha * dot + beta * c[at]!;
      }
    }
  }
}
