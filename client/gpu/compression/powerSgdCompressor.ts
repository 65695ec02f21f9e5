/**
 * PowerSGD with error feedback on the GPU (docs/design.md; the algorithm and
 * its reference: core/atomo/schemes/powersgd.ts and core/atomo/errorFeedback.ts).
 * Per layer, every round:
 *   M ← g + e                  axpy (kernels/axpy.ts), in the memory buffer
 *   Pᵀ ← Qᵀ Mᵀ                 tiled matmul (kernels/matmul.ts)
 *   P̂ ← orthonormalise(P)      on the host or the device (PowerSgdRoute)
 *   Qᵀ ← P̂ᵀ M                  tiled matmul
 *   e ← M − P̂ Qᵀ               tiled matmul with α = −1, β = 1, in place
 *   ‖ĝ − g‖² = ‖e_old − e‖²    axpy and the reduce kernel (kernels/reduce.ts)
 * Pᵀ and Qᵀ are k×rows and k×cols row-major, i.e. P̂ and Q column-major: the
 * wire's layout (core/codec/powersgd.ts), read back as the sample. The memory
 * e stays on the device between rounds; Q, read back anyway, is written back
 * as the next warm start with each column scaled by a power of two (see
 * #warmStart: exact, and it keeps P = MQ within f32 at any magnitude). A
 * column of Q that came back zero (a zero gradient) is replaced by the fresh
 * normal draws the CPU scheme would take (core/linalg/random-matrix.ts
 * gaussiansFrom on the round's stream), as is every column of the first round.
 *
 * What a caller keeps between rounds is keyed by an object it passes (the
 * worker round makes one per round function, as it keeps one LayerMemory per
 * tensor on the CPU); without one a call starts from zero memory and fresh
 * draws, like the CPU scheme without memory. The compressor keeps the memory
 * of its last MEMORIES callers.
 *
 * Differences from the float64 CPU reference: the products are float32, and
 * on the device route the orthonormalisation zeroes a column whose norm falls
 * below 10⁻⁵ of its norm before projection (float32 cannot place it;
 * orthonormalise.wgsl), where the CPU normalises whatever is left. Both send
 * P̂P̂ᵀM, the projection onto what P spans, so the estimate and the memory
 * agree to float32 accuracy; only the dropped column of P and Q differs.
 */
import { orthonormaliseColumns } from '../../../core/linalg/orthonormalise';
import { gaussiansFrom } from '../../../core/linalg/random-matrix';
import { checkRank } from '../../../core/atomo/schemes';
import type { PowerSgdSample } from '../../../core/atomo/types';
import type { StreamId } from '../../../core/rng';
import type { CompressedLayerStats } from '../../../core/training/compression';
import { AxpyKernel } from '../kernels/axpy';
import type { MatmulKernel, MatmulPlan } from '../kernels/matmul';
import { ReduceKernel, type ReducePlan } from '../kernels/reduce';
import { ORTHONORMALISE_MAX_COLUMNS, orthonormaliseBlocks } from '../kernels/svd';
import { dispatches, type Recordable } from '../runtime/dispatch';
import { StagingPool } from '../runtime/pools';
import {
  encodeLossRead,
  meanLossOf,
  tensorsKey,
  type CompressedGradient,
  type DeviceGradient,
  type GradientTensor,
} from './tensors';

/**
 * Callers whose memory one compressor keeps; a new one past this evicts the least recently used (its next round starts
 * afresh).
 */
const MEMORIES = 8;

/** Factor columns of a layer at rank r: k = min(r, rows, cols), as the CPU scheme sends. */
export function powerSgdColumns(rank: number, shape: readonly [number, number]): number {
  return Math.min(rank, shape[0], shape[1]);
}

/**
 * Whether the GPU route takes rank r (a valid one: checkRank) on these tensors (k ≤ the orthonormalisation's 256
 * columns).
 */
export function gpuPowerSgdFits(rank: number, tensors: readonly GradientTensor[]): boolean {
  return (
    (Number.isInteger(rank) || rank === Number.POSITIVE_INFINITY) &&
    rank >= 1 &&
    tensors.every((t) => powerSgdColumns(rank, t.shape) <= ORTHONORMALISE_MAX_COLUMNS)
  );
}

/**
 * Where P is orthonormalised. 'device': orthonormalise.wgsl in the same
 * command buffer as the products (no sync mid-round). 'host': P (k·rows
 * floats per layer) is read back, orthonormalised by the core's own
 * Gram–Schmidt (core/linalg/orthonormalise.ts, float64, the CPU scheme's
 * step) and written back: one sync more. The default is 'host': on
 * SwiftShader the kernel spends its time in barriers, so the host step is
 * far faster and whole rounds tie (docs/design.md, "GPU routes"); a
 * hardware GPU, where a workgroup barrier is cheap and a read-back is not,
 * may prefer 'device'.
 */
export type PowerSgdRoute = 'device' | 'host';

/**
 * Orthonormalises the k columns (each `rows` long, column-major at `offset`) of P in place with the core's
 * Gram–Schmidt.
 */
function orthonormaliseBlock(pt: Float32Array, offset: number, rows: number, k: number): void {
  const p = new Float64Array(rows * k);
  for (let a = 0; a < k; a++) for (let i = 0; i < rows; i++) p[i * k + a] = pt[offset + a * rows + i]!;
  orthonormaliseColumns(p, rows, k);
  for (let a = 0; a < k; a++) for (let i = 0; i < rows; i++) pt[offset + a * rows + i] = p[i * k + a]!;
}

/** One caller's device memory for one set of tensors and rank, with the work recorded on it. */
interface State {
  readonly signature: string;
  readonly columns: number[];
  /** Per layer, where its Pᵀ and Qᵀ start in `pt` and `qt` (floats). */
  readonly pOffsets: number[];
  readonly qOffsets: number[];
  /** e between rounds, M during one: laid out like the gradient. */
  readonly memory: GPUBuffer;
  /** e_old, then e_old − e = ĝ − g. */
  readonly difference: GPUBuffer;
  readonly pt: GPUBuffer;
  readonly qt: GPUBuffer;
  /** [‖ĝ − g‖² per layer, ‖g‖² per layer]. */
  readonly stats: GPUBuffer;
  readonly floats: number;
  /**
   * Pᵀ = Qᵀ Mᵀ per layer; then orthonormalise.wgsl on the device route; then Qᵀ = P̂ᵀ M and e = M − P̂ Qᵀ per layer.
   */
  readonly products: Recordable[];
  readonly orthonormalise: Recordable;
  readonly updates: Recordable[];
  /** ‖ĝ − g‖² per layer. */
  readonly errorNorms: ReducePlan[];
  /** ‖g‖² per layer, for the gradient buffer they read (the backend keeps one per batch size). */
  gradientNorms: { readonly buffer: GPUBuffer; readonly plans: ReducePlan[] } | null;
  readonly owned: GPUBuffer[];
  /** Q as last read back, per layer (null before the first round): the next warm start (#warmStart). */
  readonly q: (Float32Array | null)[];
}

/** PowerSGD of a gradient on the GPU, for any set of tensors. */
export class GpuPowerSgd {
  readonly #device: GPUDevice;
  readonly #matmul: MatmulKernel;
  readonly #axpy: AxpyKernel;
  readonly #reduce: ReduceKernel;
  readonly #staging: StagingPool;
  readonly #states = new Map<object, State>();
  readonly #route: PowerSgdRoute;

  /** `route`: where P is orthonormalised ('host' by default, see PowerSgdRoute). */
  constructor(device: GPUDevice, matmul: MatmulKernel, route: PowerSgdRoute = 'host') {
    this.#device = device;
    this.#route = route;
    this.#matmul = matmul;
    this.#axpy = new AxpyKernel(device);
    this.#reduce = new ReduceKernel(device);
    this.#staging = new StagingPool(device, 'PowerSgd.staging');
  }

  #build(signature: string, tensors: readonly GradientTensor[], rank: number): State {
    const device = this.#device;
    const owned: GPUBuffer[] = [];
    const storage = (label: string, floats: number): GPUBuffer => {
      const buffer = device.createBuffer({
        label: `PowerSgd.${label}`,
        size: Math.max(16, floats * 4),
        usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
      });
      owned.push(buffer);
      return buffer;
    };
    const columns = tensors.map((t) => powerSgdColumns(rank, t.shape));
    const pOffsets: number[] = [];
    const qOffsets: number[] = [];
    let pFloats = 0;
    let qFloats = 0;
    tensors.forEach((t, l) => {
      pOffsets.push(pFloats);
      qOffsets.push(qFloats);
      pFloats += columns[l]! * t.shape[0];
      qFloats += columns[l]! * t.shape[1];
    });
    // The axpys run over [0, floats): every tensor, and whatever lies between them (never read).
    const floats = Math.max(...tensors.map((t) => t.offset + t.shape[0] * t.shape[1]));
    const memory = storage('memory', floats);
    const difference = storage('difference', floats);
    const pt = storage('pt', pFloats);
    const qt = storage('qt', qFloats);
    const layers = tensors.length;
    const stats = storage('stats', 2 * layers);
    const plan = (...args: Parameters<MatmulKernel['plan']>): MatmulPlan => this.#matmul.plan(...args);
    const products = tensors.map((t, l) => {
      const [rows, cols] = t.shape;
      const k = columns[l]!;
      const at = { p: pOffsets[l]!, q: qOffsets[l]!, m: t.offset };
      return {
        // Pᵀ (k×rows) = Qᵀ (k×cols) · Mᵀ
        p: plan(
          { m: k, n: rows, k: cols, transB: true },
          { a: qt, b: memory, c: pt, offsetA: at.q, offsetB: at.m, offsetC: at.p },
        ),
        // Qᵀ (k×cols) = P̂ᵀ (k×rows) · M
        q: plan({ m: k, n: cols, k: rows }, { a: pt, b: memory, c: qt, offsetA: at.p, offsetB: at.m, offsetC: at.q }),
        // M (rows×cols) ← −P̂ Qᵀ + M
        e: plan(
          { m: rows, n: cols, k, transA: true, alpha: -1, beta: 1 },
          { a: pt, b: qt, c: memory, offsetA: at.p, offsetB: at.q, offsetC: at.m },
        ),
      };
    });
    const orthonormalise = orthonormaliseBlocks(
      device,
      owned,
      tensors.map((t, l) => ({ offset: pOffsets[l]!, rows: t.shape[0], columns: columns[l]! })),
      pt,
    );
    return {
      signature,
      columns,
      pOffsets,
      qOffsets,
      memory,
      difference,
      pt,
      qt,
      stats,
      floats,
      products: products.map((x) => x.p),
      orthonormalise: dispatches(orthonormalise),
      updates: [...products.map((x) => x.q), ...products.map((x) => x.e)],
      errorNorms: this.#norms(tensors, difference, stats, 0),
      gradientNorms: null,
      owned,
      q: tensors.map(() => null),
    };
  }

  /** Σx² of each tensor's segment of `input` into stats[outputOffset + l]. */
  #norms(tensors: readonly GradientTensor[], input: GPUBuffer, stats: GPUBuffer, outputOffset: number): ReducePlan[] {
    return tensors.map((t, l) =>
      this.#reduce.plan('sumOfSquares', [0, t.shape[0] * t.shape[1]], {
        input,
        output: stats,
        inputOffset: t.offset,
        outputOffset: outputOffset + l,
      }),
    );
  }

  /** The caller's state for these tensors and rank (made afresh, zero memory, when either changed). */
  #state(key: object, tensors: readonly GradientTensor[], gradient: GPUBuffer, rank: number): State {
    const signature = `${tensorsKey(tensors)}|${rank}`;
    let state = this.#states.get(key);
    if (state !== undefined && state.signature !== signature) {
      this.#free(state);
      state = undefined;
    }
    this.#states.delete(key);
    state ??= this.#build(signature, tensors, rank);
    if (state.gradientNorms?.buffer !== gradient) {
      for (const plan of state.gradientNorms?.plans ?? []) plan.destroy();
      state.gradientNorms = { buffer: gradient, plans: this.#norms(tensors, gradient, state.stats, tensors.length) };
    }
    this.#states.set(key, state);
    for (const [oldest, old] of this.#states) {
      if (this.#states.size <= MEMORIES) break;
      this.#free(old);
      this.#states.delete(oldest);
    }
    return state;
  }

  /**
   * Writes each layer's warm start Q: last round's, each column scaled by a
   * power of two to a largest |q| in [1, 2) (exact, and P̂ does not depend on
   * a column's scale, so P̂ is what the unscaled Q gives: P = MQ then stays in
   * f32's range for gradients of any magnitude, where Q ~ ‖M‖ and P ~ ‖M‖²
   * would not); a column that came back zero, and every column of a first
   * round, drawn afresh from stream(l) as the CPU scheme draws it.
   */
  #warmStart(state: State, tensors: readonly GradientTensor[], stream: (layer: number) => StreamId): void {
    tensors.forEach((t, l) => {
      const cols = t.shape[1];
      const k = state.columns[l]!;
      const last = state.q[l];
      const start = new Float32Array(k * cols);
      let fresh: Float64Array | null = null;
      for (let a = 0; a < k; a++) {
        let largest = 0;
        if (last) for (let j = 0; j < cols; j++) largest = Math.max(largest, Math.abs(last[a * cols + j]!));
        if (largest > 0) {
          const scale = 2 ** -Math.floor(Math.log2(largest));
          for (let j = 0; j < cols; j++) start[a * cols + j] = last![a * cols + j]! * scale;
        } else {
          fresh ??= gaussiansFrom(stream(l), k * cols);
          start.set(fresh.subarray(a * cols, (a + 1) * cols), a * cols);
        }
      }
      this.#device.queue.writeBuffer(state.qt, state.qOffsets[l]! * 4, start);
    });
  }

  /**
   * One PowerSGD round at rank r on every tensor, through error feedback kept
   * under `key` (none: zero memory, fresh draws, nothing kept); layer l's
   * fresh draws come from stream(l).
   */
  async compress(
    { tensors, gradient, stream }: DeviceGradient,
    rank: number,
    key?: object,
  ): Promise<CompressedGradient> {
    checkRank(rank);
    if (!gpuPowerSgdFits(rank, tensors))
      throw new RangeError(
        `GPU PowerSGD orthonormalises at most ${ORTHONORMALISE_MAX_COLUMNS} columns, rank ${rank} needs more`,
      );
    const own = key ?? {};
    const state = this.#state(own, tensors, gradient.buffer, rank);
    try {
      // Without a key the state is new: e = 0 (buffers start zeroed) and every column of Q drawn afresh.
      this.#warmStart(state, tensors, stream);
      const device = this.#device;
      let encoder = device.createCommandEncoder({ label: 'PowerSgd' });
      encoder.copyBufferToBuffer(state.memory, 0, state.difference, 0, state.floats * 4);
      this.#axpy.encode(encoder, 1, gradient.buffer, state.memory, state.floats);
      const pass = encoder.beginComputePass({ label: 'PowerSgd.products' });
      for (const step of state.products) step.record(pass);
      if (this.#route === 'device') state.orthonormalise.record(pass);
      pass.end();
      if (this.#route === 'host') {
        const read = this.#staging.encodeRead(encoder, state.pt, 0, state.pt.size);
        device.queue.submit([encoder.finish()]);
        const pt = new Float32Array(await read.map());
        tensors.forEach((t, l) => orthonormaliseBlock(pt, state.pOffsets[l]!, t.shape[0], state.columns[l]!));
        device.queue.writeBuffer(state.pt, 0, pt);
        encoder = device.createCommandEncoder({ label: 'PowerSgd.updates' });
      }
      const updates = encoder.beginComputePass({ label: 'PowerSgd.updates' });
      for (const step of state.updates) step.record(updates);
      updates.end();
      this.#axpy.encode(encoder, -1, state.memory, state.difference, state.floats);
      const norms = encoder.beginComputePass({ label: 'PowerSgd.norms' });
      for (const reduce of [...state.errorNorms, ...state.gradientNorms!.plans]) reduce.record(norms);
      norms.end();
      const reads = [
        this.#staging.encodeRead(encoder, state.pt, 0, state.pt.size),
        this.#staging.encodeRead(encoder, state.qt, 0, state.qt.size),
        this.#staging.encodeRead(encoder, state.stats, 0, 2 * tensors.length * 4),
        encodeLossRead(this.#staging, encoder, gradient),
      ];
      device.queue.submit([encoder.finish()]);
      const [pBytes, qBytes, statBytes, lossBytes] = await Promise.all(reads.map((read) => read.map()));
      this.#axpy.destroy();
      const p = new Float32Array(pBytes!);
      const q = new Float32Array(qBytes!);
      const stats = new Float32Array(statBytes!);
      const layers = tensors.map((t, l): CompressedLayerStats => {
        const [rows, cols] = t.shape;
        const k = state.columns[l]!;
        const sample: PowerSgdSample = {
          scheme: 'powersgd',
          shape: t.shape,
          rank: k,
          p: p.slice(state.pOffsets[l], state.pOffsets[l]! + k * rows),
          q: q.slice(state.qOffsets[l], state.qOffsets[l]! + k * cols),
        };
        state.q[l] = sample.q;
        // A biased scheme's "closed form" is its realised error (core/atomo/errorFeedback.ts).
        const realised = stats[l]!;
        return { sample, closedForm: realised, realised, gradientNormSq: stats[tensors.length + l]! };
      });
      return { loss: meanLossOf(lossBytes!, gradient), layers };
    } finally {
      if (key === undefined) {
        this.#states.delete(own);
        this.#free(state);
      }
    }
  }

  /** The error-feedback memory e kept under `key`, laid out like the gradient (null when none is kept): for tests. */
  async readMemory(key: object): Promise<Float32Array | null> {
    const state = this.#states.get(key);
    if (state === undefined) return null;
    return new Float32Array(await this.#staging.read(state.memory, 0, state.floats * 4));
  }

  #free(state: State): void {
    for (const reduce of [...state.errorNorms, ...(state.gradientNorms?.plans ?? [])]) reduce.destroy();
    for (const buffer of state.owned) buffer.destroy();
  }

  /** Frees every caller's memory and the kernels' buffers. */
  destroy(): void {
    for (const state of this.#states.values()) this.#free(state);
    this.#states.clear();
    this.#axpy.destroy();
    this.#reduce.destroy();
    this.#staging.destroy();
  }
}
