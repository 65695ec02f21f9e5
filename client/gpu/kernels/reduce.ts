/**
 * Host of shaders/reduce.wgsl: per-segment sum, sum of squares,
 * sum of |x| or max |x| of a GPU buffer. Semantics: core/linalg/reduce.ts.
 *
 * Use: `kernel.plan(op, offsets, operands)` once (it uploads the chunk lists
 * and allocates the intermediate buffers) and `plan.encode(encoder)` every
 * step; `kernel.encode(...)` does the same through a small cache;
 * `kernel.run(...)` is the upload-run-readback helper for tests.
 */
import reduceWgsl from '../../../shaders/reduce.wgsl?raw';
import { checkSegmentOffsets, type ReduceOp } from '../../../core/linalg/reduce';
import { readF32, uploadF32 } from '../runtime/readback';
import { isSoftwareAdapter } from '../runtime/adapter';
import {
  DispatchPlan,
  PlanCache,
  bufferWith,
  dispatchOf,
  gridFor,
  workgroupSize,
  type Dispatch,
} from '../runtime/dispatch';
import { PipelineCache, wgslConstant } from '../runtime/pipelines';

/** Elements one workgroup of reduce_wide folds (WIDE_CHUNK in reduce.wgsl). */
export const REDUCE_CHUNK = wgslConstant(reduceWgsl, 'WIDE_CHUNK');
/** Elements one invocation of reduce_narrow folds in order (NARROW_CHUNK in reduce.wgsl). */
const NARROW_CHUNK = wgslConstant(reduceWgsl, 'NARROW_CHUNK');
/** Default ReduceOptions.wideMinLength. */
const WIDE_MIN_LENGTH = 1024;
const PLAN_CACHE_SIZE = 64;
/** The bindings of reduce.wgsl, shared by both entry points: params, x, chunks, out. */
const REDUCE_BINDINGS = ['uniform', 'read-only-storage', 'read-only-storage', 'storage'] as const;

/** (⊕, f) of each op: combine with max (else +), and f as TRANSFORM in reduce.wgsl. */
const PROGRAMS = {
  sum: { max: false, transform: 0 },
  sumOfSquares: { max: false, transform: 1 },
  sumOfAbs: { max: false, transform: 2 },
  maxAbs: { max: true, transform: 2 },
} as const satisfies Record<ReduceOp, { max: boolean; transform: number }>;

/** Where the data and the results are. Offsets in f32 elements. */
export interface ReduceOperands {
  /** x; segment bounds are relative to inputOffset. */
  readonly input: GPUBuffer;
  /** Receives one f32 per segment at outputOffset + s. Must not be `input`. */
  readonly output: GPUBuffer;
  readonly inputOffset?: number;
  readonly outputOffset?: number;
}

/** One segmented reduction bound to its buffers: 1 dispatch, or more when a segment needs several chunks. */
export class ReducePlan extends DispatchPlan {
  /** Made by ReduceKernel.plan; owns its chunk lists, uniforms and intermediates. */
  constructor(passes: readonly Dispatch[], owned: readonly GPUBuffer[]) {
    super('Reduce.pass', passes, owned);
  }

  /** Number of dispatches the plan records. */
  get passCount(): number {
    return this.dispatchCount;
  }
}

/** Tuning of the program choice. */
export interface ReduceOptions {
  /**
   * Segments at least this long go to reduce_wide (chunks of 4096), shorter
   * ones to reduce_narrow (chunks of 32). Default 1024: a wide workgroup per
   * short row would spend its time in barriers.
   */
  readonly wideMinLength?: number;
}

/**
 * Options that suit the device's adapter. On SwiftShader (a CPU) never the
 * wide program: its 9 barriers per chunk made one 10⁶-element sum take
 * 190–300 ms on 2 cores, against a few ms for narrow levels.
 */
export function reduceOptionsFor(device: GPUDevice): ReduceOptions {
  return isSoftwareAdapter(device) ? { wideMinLength: Infinity } : {};
}

/** Pipelines for segmented reductions on one device. */
export class ReduceKernel {
  readonly #device: GPUDevice;
  readonly #options: ReduceOptions;
  readonly #pipelines: PipelineCache;
  readonly #layout: GPUPipelineLayout;
  readonly #plans = new PlanCache<ReducePlan>(PLAN_CACHE_SIZE);

  /** `options` default to reduceOptionsFor(device). */
  constructor(device: GPUDevice, options: ReduceOptions = reduceOptionsFor(device)) {
    this.#device = device;
    this.#options = options;
    this.#pipelines = PipelineCache.for(device);
    this.#layout = this.#pipelines.layout('Reduce', REDUCE_BINDINGS).pipeline;
  }

  #kernel(kind: 'wide' | 'narrow', max: boolean, transform: number) {
    const name = `${kind},${max ? 'max' : 'sum'},${['x', 'x²', '|x|'][transform]}`;
    return this.#pipelines.kernel({
      label: `Reduce[${name}]`,
      code: reduceWgsl,
      layout: this.#layout,
      entryPoint: `reduce_${kind}`,
      constants: { COMBINE_MAX: max ? 1 : 0, TRANSFORM: transform },
    });
  }

  #storage(label: string, bytes: number): GPUBuffer {
    return this.#device.createBuffer({
      label,
      size: Math.max(16, bytes),
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC,
    });
  }

  /**
   * Plans out[outputOffset + s] = op over segment s of the input, where
   * segment s is input[inputOffset + offsets[s] .. inputOffset + offsets[s + 1]).
   * Not cached: keep the plan and destroy it when done.
   */
  plan(op: ReduceOp, offsets: ArrayLike<number>, operands: ReduceOperands): ReducePlan {
    const inputOffset = operands.inputOffset ?? 0;
    const outputOffset = operands.outputOffset ?? 0;
    checkSegmentOffsets(offsets, operands.input.size / 4 - inputOffset);
    const segments = offsets.length - 1;
    if ((outputOffset + segments) * 4 > operands.output.size) {
      throw new RangeError(
        `Reduce: output (${operands.output.label}) ` +
          `holds ${operands.output.size} bytes, ${segments} results need ${(outputOffset + segments) * 4}`,
      );
    }
    const program = PROGRAMS[op];
    const passes: Dispatch[] = [];
    const owned: GPUBuffer[] = [];
    // Level 0 reads the input; each later level reads the previous level's chunk results.
    let input = operands.input;
    let levelInputOffset = inputOffset;
    let bounds: ArrayLike<number> = offsets;
    for (let level = 0; segments > 0; level++) {
      // Chunk lists as (first, end, out) triples; out counts results in segment order.
      const lists = { wide: [] as number[], narrow: [] as number[] };
      const nextBounds = [0];
      for (let s = 0; s < segments; s++) {
        const first = bounds[s]!;
        const end = bounds[s + 1]!;
        const wide = end - first >= (this.#options.wideMinLength ?? WIDE_MIN_LENGTH);
        const size = wide ? REDUCE_CHUNK : NARROW_CHUNK;
        const count = Math.max(1, Math.ceil((end - first) / size));
        for (let c = 0; c < count; c++) {
          lists[wide ? 'wide' : 'narrow'].push(
            first + c * size,
            Math.min(end, first + (c + 1) * size),
            nextBounds[s]! + c,
          );
        }
        nextBounds.push(nextBounds[s]! + count);
      }
      const results = nextBounds[segments]!;
      const last = results === segments;
      let output = operands.output;
      if (last) {
        for (const list of [lists.wide, lists.narrow])
          for (let i = 2; i < list.length; i += 3) list[i]! += outputOffset;
      } else {
        output = this.#storage(`Reduce.partials[${level}]`, results * 4);
        owned.push(output);
      }
      const transform = level === 0 ? program.transform : 0;
      for (const kind of ['wide', 'narrow'] as const) {
        const list = lists[kind];
        if (list.length === 0) continue;
        const chunkCount = list.length / 3;
        const name = `${op},${level},${kind}`;
        const chunkList = bufferWith(this.#device, `Reduce.chunks[${name}]`, GPUBufferUsage.STORAGE, list, owned);
        const uniform = bufferWith(
          this.#device,
          `Reduce.params[${name}]`,
          GPUBufferUsage.UNIFORM,
          [chunkCount, levelInputOffset, 0, 0],
          owned,
        );
        const kernel = this.#kernel(kind, program.max, transform);
        // reduce_wide: one workgroup per chunk; reduce_narrow: one invocation per chunk.
        const groups = kind === 'wide' ? chunkCount : Math.ceil(chunkCount / workgroupSize(kernel));
        passes.push(
          dispatchOf(
            this.#device,
            kernel,
            `Reduce[${name}]`,
            [uniform, input, chunkList, output],
            gridFor(this.#device, groups),
          ),
        );
      }
      if (last) break;
      input = output;
      levelInputOffset = 0;
      bounds = nextBounds;
    }
    return new ReducePlan(passes, owned);
  }

  /**
   * Records the reduction into `encoder`, reusing the plan of an earlier
   * call with the same arguments (64 kept). The cache key lists every offset:
   * with thousands of segments, keep a plan instead.
   */
  encode(encoder: GPUCommandEncoder, op: ReduceOp, offsets: ArrayLike<number>, operands: ReduceOperands): void {
    const input = `${this.#plans.id(operands.input)},${operands.inputOffset ?? 0}`;
    const output = `${this.#plans.id(operands.output)},${operands.outputOffset ?? 0}`;
    const key = `${op}|${input}|${output}|${Array.prototype.join.call(offsets, ',')}`;
    this.#plans.get(key, () => this.plan(op, offsets, operands)).encode(encoder);
  }

  /** Uploads x, reduces its segments and reads the results back. For tests; allocates per call. */
  async run(op: ReduceOp, x: Float32Array, offsets: ArrayLike<number>): Promise<Float32Array> {
    const device = this.#device;
    const segments = Math.max(0, offsets.length - 1);
    const input = uploadF32(device, x, 'Reduce.run.input');
    const output = this.#storage('Reduce.run.output', segments * 4);
    const plan = this.plan(op, offsets, { input, output });
    const encoder = device.createCommandEncoder({ label: 'Reduce.run' });
    plan.encode(encoder);
    device.queue.submit([encoder.finish()]);
    const result = await readF32(device, output, segments);
    plan.destroy();
    input.destroy();
    output.destroy();
    return result;
  }

  /** Frees the cached plans' buffers. */
  destroy(): void {
    this.#plans.destroyAll();
  }
}
