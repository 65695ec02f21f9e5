/**
 * Host of shaders/matmul/ (tiled.wgsl, and its split-K second pass
 * split_k.wgsl): C ← α·op(A)·op(B) + β·C on GPU buffers,
 * batched, any m, n, k. Shapes and defaults: core/linalg/matmul.ts.
 *
 * Use: `kernel.plan(shape, operands)` once per layer and `plan.encode(encoder)`
 * (or `plan.record(pass)`) every step; `kernel.encode(...)` does the same
 * through a small cache; `kernel.run(...)` is the upload-run-readback helper
 * for tests. A plan's uniforms are written once, when it is made, so any
 * number of plans can be recorded into one command encoder.
 */
import tiledWgsl from '../../../shaders/matmul/tiled.wgsl?raw';
import splitKWgsl from '../../../shaders/matmul/split_k.wgsl?raw';
import {
  matmulExtents,
  resolveMatmulShape,
  type MatmulShape,
  type ResolvedMatmulShape,
} from '../../../core/linalg/matmul';
import { readF32, uploadF32 } from '../runtime/readback';
import { isSoftwareAdapter } from '../runtime/adapter';
import {
  DispatchPlan,
  PlanCache,
  dispatchOf,
  gridFor,
  gridForItems,
  uniformBuffer,
  type Dispatch,
} from '../runtime/dispatch';
import { PipelineCache, wgslConstant, type Kernel } from '../runtime/pipelines';
import { withGrid } from './common';

/** Edge of the C tile one workgroup computes (TILE in matmul/tiled.wgsl). */
export const MATMUL_TILE = wgslConstant(tiledWgsl, 'TILE');
/** Fewer output tiles than this and the product is a candidate for split-K. */
const FEW_TILES = 8;
/** Each K slice spans at least this many k, so a slice's partial write is amortised. */
const MIN_SLICE_K = 2 * MATMUL_TILE;
const PLAN_CACHE_SIZE = 256;

/** The buffers of one product. Offsets are in f32 elements and need no binding alignment. */
export interface MatmulOperands {
  readonly a: GPUBuffer;
  readonly b: GPUBuffer;
  /** Must not be `a` or `b`: WebGPU forbids binding a buffer read-only and writable in one dispatch. */
  readonly c: GPUBuffer;
  readonly offsetA?: number;
  readonly offsetB?: number;
  readonly offsetC?: number;
}

/** How one product is computed on the device. */
export interface MatmulProgram {
  /** vec4 loads and stores (entry point `matmul_vec4`) rather than scalar ones. */
  readonly vec4: boolean;
  /** K slices computed by separate workgroups and summed by a second pass; 1 = no split-K. */
  readonly splits: number;
  /** k per slice (a multiple of MATMUL_TILE when splits > 1). */
  readonly sliceK: number;
}

/** Tuning of the program choice. */
export interface MatmulOptions {
  /**
   * Workgroups split-K aims for when C has fewer than 8 tiles of 32×32.
   * Default 32, enough for a small GPU; 1 disables split-K.
   */
  readonly targetWorkgroups?: number;
  /**
   * Most workgroups launched per product; each then loops over several
   * 32×32 tiles. Default: one workgroup per tile. On SwiftShader (a CPU),
   * starting a workgroup that uses barriers costs about as much as a whole
   * 32-deep K step, so a few looping workgroups (≈ 2 per core) run faster.
   */
  readonly maxWorkgroups?: number;
}

const ceilDiv = (x: number, y: number): number => Math.ceil(x / y);

/**
 * Options that suit the device's adapter: on SwiftShader (WebGPU on the CPU)
 * at most 4 workgroups, each looping over tiles; elsewhere the defaults.
 * Measured on 2 cores: 784×32·32×128 took 76 ms with one workgroup per tile
 * (100) and 9–14 ms with 2–4 looping workgroups.
 */
export function matmulOptionsFor(device: GPUDevice): MatmulOptions {
  return isSoftwareAdapter(device) ? { maxWorkgroups: 4 } : {};
}

/**
 * Picks the program for a product: the vec4 variant when every vector access
 * is aligned, and split-K when C has few tiles but k is long (e.g. the first
 * layer's forward product 32×784·784×128 has 4 tiles and k = 784).
 * `bytes` are the sizes of A, B and C's buffers (a vec4 binding needs ≥ 16).
 */
export function chooseMatmulProgram(
  shape: ResolvedMatmulShape,
  offsets: { readonly a: number; readonly b: number; readonly c: number },
  bytes: { readonly a: number; readonly b: number; readonly c: number },
  options: MatmulOptions = {},
): MatmulProgram {
  const s = shape;
  // The stored row of A runs along m when transposed, else along k; B's along k or n; C's along n.
  const aligned = [
    s.transA ? s.m : s.k,
    s.transB ? s.k : s.n,
    s.n,
    offsets.a,
    offsets.b,
    offsets.c,
    s.batch > 1 ? s.strideA : 0,
    s.batch > 1 ? s.strideB : 0,
    s.batch > 1 ? s.strideC : 0,
  ].every((x) => x % 4 === 0);
  const vec4 = aligned && bytes.a >= 16 && bytes.b >= 16 && bytes.c >= 16;

  const tiles = ceilDiv(s.m, MATMUL_TILE) * ceilDiv(s.n, MATMUL_TILE) * s.batch;
  const target = options.targetWorkgroups ?? 32;
  let splits = 1;
  if (tiles > 0 && tiles < FEW_TILES && target > tiles) {
    splits = Math.min(ceilDiv(target, tiles), Math.floor(s.k / MIN_SLICE_K));
  }
  if (splits <= 1) return { vec4, splits: 1, sliceK: s.k };
  const sliceK = ceilDiv(ceilDiv(s.k, splits), MATMUL_TILE) * MATMUL_TILE;
  splits = ceilDiv(s.k, sliceK);
  return splits > 1 ? { vec4, splits, sliceK } : { vec4, splits: 1, sliceK: s.k };
}

/** One product bound to its buffers, ready to record as often as needed. */
export class MatmulPlan extends DispatchPlan {
  /** The program the plan runs. */
  readonly program: MatmulProgram;

  /** Made by MatmulKernel.plan; owns its uniform buffers. */
  constructor(program: MatmulProgram, dispatches: readonly Dispatch[], uniforms: readonly GPUBuffer[]) {
    super('Matmul.pass', dispatches, uniforms);
    this.program = program;
  }
}

/** The bindings of tiled.wgsl, shared by all its entry points and variants: params, A, B, C. */
const MATMUL_BINDINGS = ['uniform', 'read-only-storage', 'read-only-storage', 'storage'] as const;

/** Pipelines, plans and a split-K workspace for matmul on one device. */
export class MatmulKernel {
  readonly #device: GPUDevice;
  readonly #options: MatmulOptions;
  readonly #pipelines: PipelineCache;
  readonly #layout: { readonly group: GPUBindGroupLayout; readonly pipeline: GPUPipelineLayout };
  readonly #splitK: Kernel;
  readonly #plans = new PlanCache<MatmulPlan>(PLAN_CACHE_SIZE);
  #workspace: GPUBuffer | null = null;
  /** Outgrown workspaces: plans recorded earlier may still use them. */
  readonly #retired: GPUBuffer[] = [];

  /** `options` default to matmulOptionsFor(device). */
  constructor(device: GPUDevice, options: MatmulOptions = matmulOptionsFor(device)) {
    this.#device = device;
    this.#options = options;
    this.#pipelines = PipelineCache.for(device);
    this.#layout = this.#pipelines.layout('Matmul', MATMUL_BINDINGS);
    this.#splitK = this.#pipelines.kernel({ label: 'Matmul.splitKSum', code: withGrid(splitKWgsl) });
  }

  /** The kernel of one variant, e.g. 'nt,vec4' (from the device's pipeline cache). */
  #variant(name: string, transA: boolean, transB: boolean, vec4: boolean): Kernel {
    return this.#pipelines.kernel({
      label: `Matmul[${name}]`,
      code: tiledWgsl,
      layout: this.#layout.pipeline,
      entryPoint: vec4 ? 'matmul_vec4' : 'matmul_scalar',
      constants: { TRANS_A: transA ? 1 : 0, TRANS_B: transB ? 1 : 0 },
    });
  }

  /** A workspace of at least `floats` f32, grown (never shrunk) on demand. */
  #workspaceFor(floats: number): GPUBuffer {
    const bytes = floats * 4;
    if (this.#workspace === null || this.#workspace.size < bytes) {
      if (this.#workspace !== null) this.#retired.push(this.#workspace);
      this.#workspace = this.#device.createBuffer({
        label: 'Matmul.splitKWorkspace',
        size: Math.max(bytes, 2 * (this.#workspace?.size ?? 0)),
        usage: GPUBufferUsage.STORAGE,
      });
    }
    return this.#workspace;
  }

  /** Builds (uncached) the plan of a product; throws if a buffer is too small or the grid too large. */
  #buildPlan(shape: MatmulShape, operands: MatmulOperands): MatmulPlan {
    const s = resolveMatmulShape(shape);
    const offsets = { a: operands.offsetA ?? 0, b: operands.offsetB ?? 0, c: operands.offsetC ?? 0 };
    const extents = matmulExtents(s);
    for (const name of ['a', 'b', 'c'] as const) {
      const offset = offsets[name];
      if (!Number.isInteger(offset) || offset < 0)
        throw new RangeError(`Matmul: offset of ${name} must be a non-negative integer`);
      if (extents[name] > 0 && (offset + extents[name]) * 4 > operands[name].size) {
        throw new RangeError(
          `Matmul: ${name} (${operands[name].label}) holds ${operands[name].size} bytes, ` +
            `the product needs ${(offset + extents[name]) * 4}`,
        );
      }
    }
    const bytes = { a: operands.a.size, b: operands.b.size, c: operands.c.size };
    const program = chooseMatmulProgram(s, offsets, bytes, this.#options);
    if (s.m === 0 || s.n === 0 || s.batch === 0) return new MatmulPlan(program, [], []);

    // Jobs: one per (C tile, batch item, K slice); workgroups loop over them (matmul/tiled.wgsl, entry points).
    const jobs = ceilDiv(s.n, MATMUL_TILE) * ceilDiv(s.m, MATMUL_TILE) * s.batch * program.splits;
    const limit = this.#device.limits.maxComputeWorkgroupsPerDimension;
    const workgroups = Math.min(jobs, Math.max(1, Math.floor(this.#options.maxWorkgroups ?? Infinity)));
    const [groupsX] = gridFor(this.#device, workgroups);
    // exactly ≤ jobs, so none idle
    const groups: [number, number, number] = [groupsX, Math.floor(workgroups / groupsX), 1];
    if (groups[1] > limit || jobs >= 2 ** 32) throw new RangeError(`Matmul: ${jobs} tiles exceed the dispatch limits`);

    const split = program.splits > 1;
    const count = s.m * s.n;
    const output = split ? this.#workspaceFor(program.splits * s.batch * count) : operands.c;
    const params = new ArrayBuffer(16 * 4); // struct Params in matmul/tiled.wgsl
    const u32 = new Uint32Array(params);
    const f32 = new Float32Array(params);
    u32.set([s.m, s.n, s.k, s.batch, offsets.a, offsets.b, split ? 0 : offsets.c, program.splits]);
    u32.set([s.strideA, s.strideB, split ? count : s.strideC, program.sliceK], 8);
    f32[12] = split ? 1 : s.alpha;
    f32[13] = split ? 0 : s.beta;
    u32[14] = s.batch * count; // between slices' outputs in the workspace
    u32[15] = jobs;
    const variant = `${s.transA ? 't' : 'n'}${s.transB ? 't' : 'n'},${program.vec4 ? 'vec4' : 'scalar'}`;
    const shapeName = `${s.batch}×${s.m}×${s.n}×${s.k}`;
    const uniforms: GPUBuffer[] = [];
    const uniform = uniformBuffer(this.#device, `Matmul.params[${variant},${shapeName}]`, params, uniforms);
    const kernel = this.#variant(variant, s.transA, s.transB, program.vec4);
    const list: Dispatch[] = [
      dispatchOf(
        this.#device,
        kernel,
        `Matmul[${variant},${shapeName}]`,
        [uniform, operands.a, operands.b, output],
        groups,
      ),
    ];
    if (split) {
      const sumParams = new ArrayBuffer(8 * 4); // struct Params in matmul/split_k.wgsl
      new Uint32Array(sumParams).set([count, s.batch, program.splits, offsets.c, s.strideC]);
      new Float32Array(sumParams).set([s.alpha, s.beta], 5);
      const sumUniform = uniformBuffer(this.#device, `Matmul.splitKParams[${shapeName}]`, sumParams, uniforms);
      list.push(
        dispatchOf(
          this.#device,
          this.#splitK,
          `Matmul.splitKSum[${shapeName}]`,
          [sumUniform, output, operands.c],
          gridForItems(this.#device, this.#splitK, count * s.batch),
        ),
      );
    }
    return new MatmulPlan(program, list, uniforms);
  }

  /**
   * The plan of a product on these buffers, made once and cached by (buffers,
   * offsets, shape); the least recently used of 256 plans is dropped.
   */
  plan(shape: MatmulShape, operands: MatmulOperands): MatmulPlan {
    const s = resolveMatmulShape(shape);
    const key = [
      this.#plans.id(operands.a),
      this.#plans.id(operands.b),
      this.#plans.id(operands.c),
      operands.offsetA ?? 0,
      operands.offsetB ?? 0,
      operands.offsetC ?? 0,
      s.m,
      s.n,
      s.k,
      s.transA,
      s.transB,
      s.batch,
      s.strideA,
      s.strideB,
      s.strideC,
      s.alpha,
      s.beta,
    ].join(',');
    return this.#plans.get(key, () => this.#buildPlan(s, operands));
  }

  /** Records C ← α·op(A)·op(B) + β·C into `encoder` (in a compute pass of its own). */
  encode(encoder: GPUCommandEncoder, shape: MatmulShape, operands: MatmulOperands): void {
    this.plan(shape, operands).encode(encoder);
  }

  /**
   * Uploads A, B (and C when β ≠ 0), runs one product and reads C back.
   * For tests and one-off use: it allocates and frees buffers on every call.
   */
  async run(shape: MatmulShape, a: Float32Array, b: Float32Array, c?: Float32Array): Promise<Float32Array> {
    const device = this.#device;
    const extents = matmulExtents(shape);
    const buffers = {
      a: uploadF32(device, a, 'Matmul.run.a'),
      b: uploadF32(device, b, 'Matmul.run.b'),
      c: uploadF32(device, c ?? new Float32Array(extents.c), 'Matmul.run.c'),
    };
    const plan = this.#buildPlan(shape, buffers);
    const encoder = device.createCommandEncoder({ label: 'Matmul.run' });
    plan.encode(encoder);
    device.queue.submit([encoder.finish()]);
    const out = await readF32(device, buffers.c, extents.c);
    plan.destroy();
    for (const buffer of Object.values(buffers)) buffer.destroy();
    return out;
  }

  /** Frees the workspace and cached plans' uniforms. Pipelines are freed by the GC. */
  destroy(): void {
    this.#plans.destroyAll();
    this.#workspace?.destroy();
    for (const buffer of this.#retired) buffer.destroy();
    this.#retired.length = 0;
    this.#workspace = null;
  }
}
