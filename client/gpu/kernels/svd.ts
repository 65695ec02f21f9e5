/**
 * Host of shaders/svd/, the batched GPU SVD: prepare.wgsl, gemm.wgsl,
 * orthonormalise.wgsl, jacobi.wgsl and sort.wgsl.
 *
 * A batch of f32 matrices of different shapes is decomposed in one command
 * buffer, with no CPU round trip per sweep: Jacobi runs `sweepsPerDispatch`
 * sweeps per dispatch and a converged matrix returns at once from the
 * remaining dispatches. Routes by shape are described in svdPlan.ts.
 *
 * Result layout (per matrix, k triplets, σ descending):
 *   u:              k·rows, atom t's left vector at [t·rows, (t+1)·rows)
 *   singularValues: k
 *   v:              k·cols, atom t's right vector at [t·cols, (t+1)·cols)
 * i.e. U and V column-major, the layout spectral ATOMO sends
 * (core/atomo/types.ts SpectralSample). `rank` counts σ above
 * max(rows, cols)·2⁻²³·σ₀ (core/linalg/svd.ts's rule at f32's ε), but the
 * triplets below it are kept, not zeroed (see shaders/svd/sort.wgsl); only
 * an exactly zero column gives σ = 0 with zero u and v.
 */
import prepareWgsl from '../../../shaders/svd/prepare.wgsl?raw';
import gemmWgsl from '../../../shaders/svd/gemm.wgsl?raw';
import orthonormaliseWgsl from '../../../shaders/svd/orthonormalise.wgsl?raw';
import jacobiWgsl from '../../../shaders/svd/jacobi.wgsl?raw';
import sortWgsl from '../../../shaders/svd/sort.wgsl?raw';
import { gaussians } from '../../../core/linalg/random-matrix';
import { dispatchOf, dispatches, jobTable, type Dispatch } from '../runtime/dispatch';
import { PipelineCache, wgslConstant, type Kernel } from '../runtime/pipelines';
import { StagingPool } from '../runtime/pools';
import { withJobs, withScaling, withStructs } from './common';
import {
  F32_EPSILON,
  F32_UNIT_ROUNDOFF,
  planSvd,
  type SvdMatrixPlan,
  type SvdOptions,
  type SvdPlan,
  type SvdRoute,
  type SvdShape,
} from './svdPlan';

export { type SvdOptions, type SvdPlan, type SvdRoute, type SvdShape } from './svdPlan';

/** One input matrix: row-major rows×cols. */
export interface SvdMatrix extends SvdShape {
  readonly data: Float32Array;
}

/** The (thin or top-k) SVD of one matrix; layouts in the module comment. */
export interface SvdMatrixResult {
  readonly rows: number;
  readonly cols: number;
  /** Triplets stored. */
  readonly k: number;
  readonly u: Float32Array;
  readonly singularValues: Float32Array;
  readonly v: Float32Array;
  /** Number of σ above max(rows, cols)·2⁻²³·σ₀: the triplets that are not rounding noise. */
  readonly rank: number;
  /** Jacobi sweeps over all phases (the last one found nothing to rotate when converged). */
  readonly sweeps: number;
  /** Max |cos| over column pairs in the last sweep of the last Jacobi phase. */
  readonly maxCos: number;
  /** Whether the last Jacobi phase met its tolerance within maxSweeps. */
  readonly converged: boolean;
  readonly route: SvdRoute;
}

const STATE_WORDS = 8; // struct MatrixState in shaders/common/structs.wgsl: 8 × 4 bytes
const JACOBI_PHASE_FIRST = 1;
const JACOBI_PHASE_REFINE = 2;
/** Edge of the C tile of one gemm.wgsl workgroup. */
const GEMM_TILE = wgslConstant(gemmWgsl, 'TILE');
/** The largest matrices the kernels hold in workgroup memory (their MAX_COLUMNS). */
const CAPACITY = {
  maxShortSide: wgslConstant(sortWgsl, 'MAX_COLUMNS'),
  maxSketch: wgslConstant(orthonormaliseWgsl, 'MAX_COLUMNS'),
};

/** Most columns one orthonormalise.wgsl block may have (its MAX_COLUMNS). */
export const ORTHONORMALISE_MAX_COLUMNS = CAPACITY.maxSketch;

/** A column-major block of `rows`-long columns at `offset` (floats) in a buffer. */
export interface ColumnBlock {
  readonly offset: number;
  readonly rows: number;
  readonly columns: number;
}

/**
 * One dispatch of orthonormalise.wgsl (CGS2, one workgroup per block, each
 * column scaled by its largest |x| first) over
 * `blocks` of `buffer`, in place; the job table goes into `owned`. For a
 * host outside the SVD that needs only this kernel (PowerSGD's P̂,
 * compression/powerSgdCompressor.ts); the SVD itself runs it unscaled.
 */
export function orthonormaliseBlocks(
  device: GPUDevice,
  owned: GPUBuffer[],
  blocks: readonly ColumnBlock[],
  buffer: GPUBuffer,
): Dispatch {
  for (const b of blocks) {
    if (b.columns > ORTHONORMALISE_MAX_COLUMNS)
      throw new RangeError(`orthonormalise: ${b.columns} columns, at most ${ORTHONORMALISE_MAX_COLUMNS}`);
  }
  // Each column divided by its largest |x| first (SCALE_COLUMNS): P = MQ of any f32 magnitude.
  const kernel = PipelineCache.for(device).kernel({
    label: 'Svd.orthonormaliseScaled',
    code: withJobs(orthonormaliseWgsl),
    constants: { SCALE_COLUMNS: 1 },
  });
  const table = jobTable(
    device,
    'Svd.orthonormalise.jobs',
    blocks.map((b) => [b.offset, b.rows, b.columns, 0]),
    false,
    owned,
  );
  return dispatchOf(device, kernel, 'Svd.orthonormalise', [table, buffer], [blocks.length, 1, 1]);
}

/** The SVD kernels of one device (pipelines from its pipeline cache), shared by every batch. */
export class SvdKernel {
  readonly device: GPUDevice;
  readonly prepare: Kernel;
  readonly gemm: Kernel;
  readonly orthonormalise: Kernel;
  readonly jacobi: Kernel;
  readonly sort: Kernel;

  constructor(device: GPUDevice) {
    this.device = device;
    const cache = PipelineCache.for(device);
    this.prepare = cache.kernel({ label: 'Svd.prepare', code: withJobs(withScaling(prepareWgsl)) });
    this.gemm = cache.kernel({ label: 'Svd.gemm', code: gemmWgsl });
    this.orthonormalise = cache.kernel({ label: 'Svd.orthonormalise', code: withJobs(orthonormaliseWgsl) });
    this.jacobi = cache.kernel({ label: 'Svd.jacobi', code: withJobs(withStructs(jacobiWgsl)) });
    this.sort = cache.kernel({ label: 'Svd.sort', code: withJobs(withScaling(sortWgsl)) });
  }

  /** Plans a batch of shapes and allocates its buffers (reuse it for every call with these shapes). */
  createBatch(shapes: readonly SvdShape[], options: SvdOptions = {}): SvdBatch {
    return new SvdBatch(this, planSvd(shapes, options, CAPACITY));
  }
}

/**
 * The buffers and recorded passes of one batch shape. `encode` records the
 * whole SVD; `read` copies the results back.
 */
export class SvdBatch {
  readonly plan: SvdPlan;
  /** Row-major inputs at plan.matrices[i].inputOffset (floats); write with writeInputs or copy into it. */
  readonly input: GPUBuffer;
  /** Outputs (layouts in the module comment) and per-matrix state (8 words each). */
  readonly u: GPUBuffer;
  readonly singularValues: GPUBuffer;
  readonly v: GPUBuffer;
  readonly states: GPUBuffer;

  readonly #kernel: SvdKernel;
  readonly #owned: GPUBuffer[] = [];
  readonly #aux2: GPUBuffer;
  readonly #passes: Dispatch[] = [];
  readonly #staging: StagingPool;

  constructor(kernel: SvdKernel, plan: SvdPlan) {
    this.#kernel = kernel;
    this.plan = plan;
    const device = kernel.device;
    this.#staging = new StagingPool(device, 'Svd.staging');
    const storage = (name: string, floats: number, extra = 0): GPUBuffer => {
      const buffer = device.createBuffer({
        label: `Svd.${name}`,
        size: Math.max(4, floats * 4),
        usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST | extra,
      });
      this.#owned.push(buffer);
      return buffer;
    };
    const { sizes } = plan;
    const count = plan.matrices.length;
    this.input = storage('input', sizes.input);
    const work = storage('work', sizes.work);
    const aux = storage('aux', sizes.aux);
    this.#aux2 = storage('aux2', sizes.aux2);
    const proj = storage('proj', sizes.proj);
    const rot = storage('rot', sizes.rot);
    const comp = storage('comp', sizes.comp);
    this.u = storage('u', sizes.u);
    this.singularValues = storage('singularValues', sizes.s);
    this.v = storage('v', sizes.v);
    this.states = storage('states', count * STATE_WORDS);
    this.#initSketches();
    this.#recordPasses(work, aux, this.#aux2, proj, rot, comp);
  }

  /** Writes the matrices (row-major, in plan order) into `input`. */
  writeInputs(matrices: readonly SvdMatrix[]): void {
    const queue = this.#kernel.device.queue;
    this.plan.matrices.forEach((p, i) => {
      const matrix = matrices[i];
      if (
        matrix === undefined ||
        matrix.rows !== p.rows ||
        matrix.cols !== p.cols ||
        matrix.data.length !== p.rows * p.cols
      ) {
        throw new RangeError(`svd: matrix ${i} does not match the planned ${p.rows}×${p.cols}`);
      }
      queue.writeBuffer(this.input, p.inputOffset * 4, ownBuffer(matrix.data));
    });
  }

  /**
   * Top-k warm start (as PowerSGD): the sketch Ω of matrix `index` starts
   * from the previous round's leading vectors on the short side, the rest
   * stays Gaussian. Ignored for matrices not on the top-k route.
   */
  setWarmStart(index: number, previous: SvdMatrixResult): void {
    const p = this.plan.matrices[index];
    if (p === undefined || p.route !== 'topk' || previous.rows !== p.rows || previous.cols !== p.cols) return;
    // W's short side is A's columns (v) unless A was transposed (then u).
    const basis = p.transposed ? previous.u : previous.v;
    const columns = Math.min(previous.rank, p.sketch);
    if (columns === 0) return;
    this.#kernel.device.queue.writeBuffer(this.#aux2, p.aux2Offset * 4, ownBuffer(basis.subarray(0, columns * p.n)));
  }

  /** Records the whole SVD of the matrices in `this.input` into an open compute pass (no CPU round trip). */
  record(pass: GPUComputePassEncoder): void {
    dispatches(...this.#passes).record(pass);
  }

  /** Records the whole SVD in a compute pass of its own. */
  encode(encoder: GPUCommandEncoder): void {
    const pass = encoder.beginComputePass({ label: 'Svd.pass' });
    this.record(pass);
    pass.end();
  }

  /** Copies the results of the last submitted `encode` back to the CPU. */
  async read(): Promise<SvdMatrixResult[]> {
    const device = this.#kernel.device;
    const encoder = device.createCommandEncoder({ label: 'Svd.readback' });
    const reads = [this.u, this.singularValues, this.v, this.states].map((source) =>
      this.#staging.encodeRead(encoder, source, 0, source.size),
    );
    device.queue.submit([encoder.finish()]);
    const [u, s, v, states] = await Promise.all(reads.map((read) => read.map()));
    const stateWords = new Uint32Array(states!);
    const stateFloats = new Float32Array(states!);
    return this.plan.matrices.map((p, i): SvdMatrixResult => {
      const base = i * STATE_WORDS;
      const maxCos = stateFloats[base + 4]!;
      return {
        rows: p.rows,
        cols: p.cols,
        k: p.k,
        u: new Float32Array(u!, p.uOffset * 4, p.k * p.rows),
        singularValues: new Float32Array(s!, p.sOffset * 4, p.k),
        v: new Float32Array(v!, p.vOffset * 4, p.k * p.cols),
        rank: stateWords[base + 6]!,
        sweeps: stateWords[base + 3]!,
        maxCos,
        converged: stateWords[base + 5]! === 1,
        route: p.route,
      };
    });
  }

  /** Frees the batch's buffers (after its last submitted work). */
  destroy(): void {
    for (const buffer of this.#owned) buffer.destroy();
    this.#staging.destroy();
  }

  /** Gaussian Ω (n×l, column-major) for every top-k matrix. */
  #initSketches(): void {
    const { matrices, options } = this.plan;
    matrices.forEach((p, i) => {
      if (p.route !== 'topk') return;
      const omega = Float32Array.from(gaussians(p.n * p.sketch, options.seed * 65_537 + i));
      this.#kernel.device.queue.writeBuffer(this.#aux2, p.aux2Offset * 4, omega);
    });
  }

  #recordPasses(
    work: GPUBuffer,
    aux: GPUBuffer,
    aux2: GPUBuffer,
    proj: GPUBuffer,
    rot: GPUBuffer,
    comp: GPUBuffer,
  ): void {
    const kernel = this.#kernel;
    const { matrices, options } = this.plan;
    const all = matrices.map((p, i) => ({ p, i }));
    const on = (route: SvdRoute): { p: SvdMatrixPlan; i: number }[] => all.filter(({ p }) => p.route === route);
    const direct = on('jacobi');
    const gram = on('gram');
    const topk = on('topk');

    this.#add(
      'prepare',
      kernel.prepare,
      [this.input, work, this.states],
      all.map(({ p, i }) => prepareJob(p, i)),
      [all.length, 1, 1],
    );

    // Gram route: G = WᵀW.
    this.#gemm(
      'gram',
      work,
      work,
      aux,
      gram.map(({ p }) => ({
        x: [p.workOffset, 1, p.m],
        y: [p.workOffset, 1, p.m],
        c: [p.auxOffset, p.n],
        pqk: [p.n, p.n, p.m],
      })),
    );

    // Top-k route: Y = WΩ, then (Z = WᵀY, Y = WZ) × powerIterations, each orthonormalised; Bᵀ = WᵀQ.
    if (topk.length > 0) {
      // Wᵀ·(the m-side sketch in aux) into `target` at `offset(p)`, n×l.
      const wTransposeTimesY = (offset: (p: SvdMatrixPlan) => number): GemmSpec[] =>
        topk.map(({ p }) => ({
          x: [p.workOffset, 1, p.m],
          y: [p.auxOffset, 1, p.m],
          c: [offset(p), p.n],
          pqk: [p.n, p.sketch, p.m],
        }));
      // W·(the n-side sketch in aux2) into aux, m×l.
      const wTimesZ: GemmSpec[] = topk.map(({ p }) => ({
        x: [p.workOffset, p.m, 1],
        y: [p.aux2Offset, 1, p.n],
        c: [p.auxOffset, p.m],
        pqk: [p.m, p.sketch, p.n],
      }));
      const orthY = topk.map(({ p }) => [p.auxOffset, p.m, p.sketch, 0]);
      const orthZ = topk.map(({ p }) => [p.aux2Offset, p.n, p.sketch, 0]);
      const groups: [number, number, number] = [topk.length, 1, 1];
      this.#gemm('sketchY', work, aux2, aux, wTimesZ);
      this.#add('orthY', kernel.orthonormalise, [aux], orthY, groups);
      for (let it = 0; it < options.powerIterations; it++) {
        this.#gemm(
          'sketchZ',
          work,
          aux,
          aux2,
          wTransposeTimesY((p) => p.aux2Offset),
        );
        this.#add('orthZ', kernel.orthonormalise, [aux2], orthZ, groups);
        this.#gemm('sketchY', work, aux2, aux, wTimesZ);
        this.#add('orthY', kernel.orthonormalise, [aux], orthY, groups);
      }
      this.#gemm(
        'projectT',
        work,
        aux,
        proj,
        wTransposeTimesY((p) => p.projOffset),
      );
    }

    const tolFor = (m: number): number => Math.sqrt(m) * F32_UNIT_ROUNDOFF;
    const dispatches = Math.ceil(options.maxSweeps / options.sweepsPerDispatch);
    const jacobi = (name: string, target: GPUBuffer, jobs: number[][]): void => {
      for (let d = 0; d < dispatches; d++)
        this.#add(name, kernel.jacobi, [target, rot, this.states], jobs, [jobs.length, 1, 1], true);
    };
    const jacobiJob = (
      off: number,
      m: number,
      n: number,
      rotOffset: number,
      i: number,
      phase: number,
      initV: boolean,
    ): number[] => [
      off,
      rotOffset,
      m,
      n,
      i,
      phase,
      initV ? 1 : 0,
      options.sweepsPerDispatch,
      options.maxSweeps,
      tolFor(m),
    ];
    jacobi(
      'jacobiDirect',
      work,
      direct.map(({ p, i }) => jacobiJob(p.workOffset, p.m, p.n, p.rotOffset, i, JACOBI_PHASE_FIRST, true)),
    );
    jacobi(
      'jacobiGram',
      aux,
      gram.map(({ p, i }) => jacobiJob(p.auxOffset, p.n, p.n, p.rotOffset, i, JACOBI_PHASE_FIRST, true)),
    );

    // Gram route: B = W·V₀.
    this.#gemm(
      'project',
      work,
      rot,
      proj,
      gram.map(({ p }) => columnMajorProduct(p.workOffset, p.rotOffset, p.projOffset, p.m, p.n, p.n)),
    );
    const projJobs = [
      ...(options.refine
        ? gram.map(({ p, i }) => jacobiJob(p.projOffset, p.m, p.n, p.rotOffset, i, JACOBI_PHASE_REFINE, false))
        : []),
      ...topk.map(({ p, i }) => jacobiJob(p.projOffset, p.n, p.sketch, p.rotOffset, i, JACOBI_PHASE_FIRST, true)),
    ];
    jacobi('jacobiProjected', proj, projJobs);

    // Top-k route: the long-side vectors Q·Ṽ.
    this.#gemm(
      'lift',
      aux,
      rot,
      comp,
      topk.map(({ p }) => columnMajorProduct(p.auxOffset, p.rotOffset, p.compOffset, p.m, p.sketch, p.sketch)),
    );

    const sortJob = (
      p: SvdMatrixPlan,
      i: number,
      srcOff: number,
      srcLen: number,
      count: number,
      otherOff: number,
      otherLen: number,
      srcIsLong: boolean,
    ): number[] => [
      srcOff,
      srcLen,
      count,
      otherOff,
      otherLen,
      i,
      // Long-side vectors of W are A's u unless A was transposed.
      srcIsLong !== p.transposed ? 1 : 0,
      p.uOffset,
      p.sOffset,
      p.vOffset,
      p.k,
      Math.max(p.rows, p.cols) * F32_EPSILON,
    ];
    const sort = (name: string, columns: GPUBuffer, companions: GPUBuffer, jobs: number[][]): void =>
      this.#add(
        name,
        kernel.sort,
        [columns, companions, this.states, this.u, this.singularValues, this.v],
        jobs,
        [jobs.length, 1, 1],
        true,
      );
    sort(
      'sortDirect',
      work,
      rot,
      direct.map(({ p, i }) => sortJob(p, i, p.workOffset, p.m, p.n, p.rotOffset, p.n, true)),
    );
    sort(
      'sortGram',
      proj,
      rot,
      gram.map(({ p, i }) => sortJob(p, i, p.projOffset, p.m, p.n, p.rotOffset, p.n, true)),
    );
    sort(
      'sortTopk',
      proj,
      comp,
      topk.map(({ p, i }) => sortJob(p, i, p.projOffset, p.n, p.sketch, p.compOffset, p.m, false)),
    );
  }

  #gemm(name: string, x: GPUBuffer, y: GPUBuffer, c: GPUBuffer, specs: GemmSpec[]): void {
    if (specs.length === 0) return;
    const tiles = (count: number): number => Math.ceil(count / GEMM_TILE);
    const jobs = specs.map(({ x: [xOff, xsk, xsi], y: [yOff, ysk, ysj], c: [cOff, ldc], pqk: [p, q, k] }) => [
      xOff,
      xsk,
      xsi,
      yOff,
      ysk,
      ysj,
      cOff,
      ldc,
      p,
      q,
      k,
      0,
    ]);
    const groupsX = Math.max(...specs.map((s) => tiles(s.pqk[0])));
    const groupsY = Math.max(...specs.map((s) => tiles(s.pqk[1])));
    this.#add(`gemm.${name}`, this.#kernel.gemm, [x, y, c], jobs, [groupsX, groupsY, specs.length]);
  }

  /**
   * Adds a pass whose binding 0 is a job table (one record of u32 words per
   * job; a non-integer word is stored as f32 bits) and bindings 1.. the buffers.
   */
  #add(
    name: string,
    kernel: Kernel,
    buffers: GPUBuffer[],
    jobs: number[][],
    groups: [number, number, number],
    lastWordIsFloat = false,
  ): void {
    if (jobs.length === 0) return;
    const device = this.#kernel.device;
    const jobBuffer = jobTable(device, `Svd.${name}.jobs`, jobs, lastWordIsFloat, this.#owned);
    this.#passes.push(dispatchOf(device, kernel, `Svd.${name}`, [jobBuffer, ...buffers], groups));
  }
}

/** Strided product spec for svd/gemm.wgsl: [offset, stride k, stride i|j] and C's [offset, ldc]. */
interface GemmSpec {
  readonly x: readonly [number, number, number];
  readonly y: readonly [number, number, number];
  readonly c: readonly [number, number];
  readonly pqk: readonly [number, number, number];
}

/** C (m×q) = W (m×k) · Y (k×q), all column-major, as a gemm.wgsl job. */
function columnMajorProduct(
  xOffset: number,
  yOffset: number,
  cOffset: number,
  m: number,
  q: number,
  k: number,
): GemmSpec {
  return { x: [xOffset, m, 1], y: [yOffset, 1, k], c: [cOffset, m], pqk: [m, q, k] };
}

/** The view itself when it sits on a plain ArrayBuffer (what writeBuffer takes), else a copy. */
function ownBuffer(data: Float32Array): Float32Array<ArrayBuffer> {
  return data.buffer instanceof ArrayBuffer ? (data as Float32Array<ArrayBuffer>) : new Float32Array(data);
}

function prepareJob(p: SvdMatrixPlan, i: number): number[] {
  return [p.inputOffset, p.rows, p.cols, p.workOffset, i];
}

/**
 * Thin SVD (or top-k with options.rank) of a batch of row-major f32
 * matrices on `device`: uploads, runs one command buffer, reads back.
 */
export async function svdBatched(
  device: GPUDevice,
  matrices: readonly SvdMatrix[],
  options: SvdOptions & { readonly warmStart?: readonly (SvdMatrixResult | undefined)[] } = {},
): Promise<SvdMatrixResult[]> {
  if (matrices.length === 0) return [];
  const batch = new SvdKernel(device).createBatch(matrices, options);
  try {
    batch.writeInputs(matrices);
    options.warmStart?.forEach((previous, i) => {
      if (previous !== undefined) batch.setWarmStart(i, previous);
    });
    const encoder = device.createCommandEncoder({ label: 'Svd.encoder' });
    batch.encode(encoder);
    device.queue.submit([encoder.finish()]);
    return await batch.read();
  } finally {
    batch.destroy();
  }
}
