/**
 * Planning for the batched GPU SVD (client/gpu/kernels/svd.ts): which route each
 * matrix takes, where its pieces live in the shared buffers, and the job
 * records every pass reads. Pure arithmetic, no GPU calls (the kernels'
 * capacities come from their WGSL, through client/gpu/kernels/svd.ts).
 *
 * Every matrix is first copied to a tall work matrix W (m×n, m ≥ n,
 * column-major; Aᵀ when A is wide). Then one of three routes:
 *  - `jacobi` (n ≤ gramThreshold): one-sided Jacobi on W itself.
 *  - `gram`   (n > gramThreshold): Jacobi eigen-decomposition of the small
 *             n×n Gram matrix G = WᵀW gives V₀; then B = W·V₀ has nearly
 *             orthogonal columns, and (with `refine`) one-sided Jacobi on B
 *             restores full f32 accuracy in a few sweeps.
 *  - `topk`   (rank k with k + oversampling < n): randomized subspace
 *             iteration gives an orthonormal Q (m×l, l = k + oversampling)
 *             with W ≈ QQᵀW; Jacobi on Bᵀ = WᵀQ (n×l), then U = Q·Ṽ.
 */

/** Shape of one matrix of a batch (row-major rows×cols). */
export interface SvdShape {
  readonly rows: number;
  readonly cols: number;
}

/** Which algorithm a matrix takes; see the module comment. */
export type SvdRoute = 'jacobi' | 'gram' | 'topk';

/** Options of the batched SVD. Defaults in brackets. */
export interface SvdOptions {
  /** Top-k mode: only the k leading triplets are computed and returned [all]. */
  readonly rank?: number;
  /** Extra sketch columns in top-k mode [10]. */
  readonly oversampling?: number;
  /** Power (subspace) iterations in top-k mode [2]. */
  readonly powerIterations?: number;
  /** Short sides above this take the Gram route [32]. */
  readonly gramThreshold?: number;
  /** Gram route: one-sided Jacobi on W·V₀ for full accuracy [true]. */
  readonly refine?: boolean;
  /** Jacobi sweeps per dispatch; converged matrices skip the rest [5]. */
  readonly sweepsPerDispatch?: number;
  /** Cap on sweeps of each Jacobi phase [30]. */
  readonly maxSweeps?: number;
  /** Seed of the Gaussian test matrix Ω of top-k mode [1]. */
  readonly seed?: number;
}

/** f32 unit roundoff 2⁻²⁴: LAPACK sgesvj's ε in the stopping rule |cos| ≤ √m·ε. */
export const F32_UNIT_ROUNDOFF = 2 ** -24;
/** f32 machine epsilon 2⁻²³: σ ≤ max(rows, cols)·ε·σ₀ counts as zero (the CPU reference's rule at f32). */
export const F32_EPSILON = 2 ** -23;

/** Where one matrix's pieces live; offsets count floats. */
export interface SvdMatrixPlan {
  readonly rows: number;
  readonly cols: number;
  readonly m: number;
  readonly n: number;
  readonly transposed: boolean;
  readonly route: SvdRoute;
  /** Triplets returned. */
  readonly k: number;
  /** Sketch width l (top-k route), else n. */
  readonly sketch: number;
  readonly inputOffset: number;
  readonly workOffset: number;
  readonly auxOffset: number;
  readonly aux2Offset: number;
  readonly projOffset: number;
  readonly rotOffset: number;
  readonly compOffset: number;
  readonly uOffset: number;
  readonly sOffset: number;
  readonly vOffset: number;
}

/** The whole batch: per-matrix plans and the size (floats) of every buffer. */
export interface SvdPlan {
  readonly matrices: readonly SvdMatrixPlan[];
  readonly sizes: {
    readonly input: number;
    readonly work: number;
    readonly aux: number;
    readonly aux2: number;
    readonly proj: number;
    readonly rot: number;
    readonly comp: number;
    readonly u: number;
    readonly s: number;
    readonly v: number;
  };
  readonly options: Required<Omit<SvdOptions, 'rank'>> & { readonly rank: number | undefined };
}

/**
 * What the kernels hold in workgroup memory: the largest short side (sort.wgsl) and sketch width l = k + oversampling
 * (orthonormalise.wgsl).
 */
export interface SvdCapacity {
  readonly maxShortSide: number;
  readonly maxSketch: number;
}

/** Chooses routes and lays out the buffers for a batch of shapes. */
export function planSvd(shapes: readonly SvdShape[], options: SvdOptions, capacity: SvdCapacity): SvdPlan {
  const opts = {
    rank: options.rank,
    oversampling: options.oversampling ?? 10,
    powerIterations: options.powerIterations ?? 2,
    gramThreshold: options.gramThreshold ?? 32,
    refine: options.refine ?? true,
    sweepsPerDispatch: options.sweepsPerDispatch ?? 5,
    maxSweeps: options.maxSweeps ?? 30,
    seed: options.seed ?? 1,
  };
  const size = { input: 0, work: 0, aux: 0, aux2: 0, proj: 0, rot: 0, comp: 0, u: 0, s: 0, v: 0 };
  const matrices = shapes.map(({ rows, cols }): SvdMatrixPlan => {
    if (!Number.isInteger(rows) || !Number.isInteger(cols) || rows < 1 || cols < 1) {
      throw new RangeError(`svd: bad shape ${rows}×${cols}`);
    }
    const transposed = rows < cols;
    const m = Math.max(rows, cols);
    const n = Math.min(rows, cols);
    if (n > capacity.maxShortSide) throw new RangeError(`svd: short side ${n} above ${capacity.maxShortSide}`);
    const k = opts.rank === undefined ? n : Math.max(1, Math.min(opts.rank, n));
    const sketch = Math.min(n, k + opts.oversampling);
    const route: SvdRoute = opts.rank !== undefined && sketch < n ? 'topk' : n > opts.gramThreshold ? 'gram' : 'jacobi';
    if (route === 'topk' && sketch > capacity.maxSketch)
      throw new RangeError(`svd: sketch ${sketch} above ${capacity.maxSketch}`);
    const take = (key: keyof typeof size, floats: number): number => {
      const at = size[key];
      size[key] += floats;
      return at;
    };
    const l = route === 'topk' ? sketch : n;
    return {
      rows,
      cols,
      m,
      n,
      transposed,
      route,
      k,
      sketch: l,
      inputOffset: take('input', rows * cols),
      workOffset: take('work', m * n),
      // gram: G (n×n); topk: the m-side sketch Y, then Q (m×l).
      auxOffset: take('aux', route === 'gram' ? n * n : route === 'topk' ? m * l : 0),
      // topk: Ω, then the n-side sketch Z (n×l).
      aux2Offset: take('aux2', route === 'topk' ? n * l : 0),
      // gram: B = W·V₀ (m×n); topk: Bᵀ = WᵀQ (n×l).
      projOffset: take('proj', route === 'gram' ? m * n : route === 'topk' ? n * l : 0),
      // V (n×n), or Ṽ (l×l) for topk.
      rotOffset: take('rot', l * l),
      // topk: Q·Ṽ (m×l).
      compOffset: take('comp', route === 'topk' ? m * l : 0),
      uOffset: take('u', k * rows),
      sOffset: take('s', k),
      vOffset: take('v', k * cols),
    };
  });
  return { matrices, sizes: size, options: opts };
}
