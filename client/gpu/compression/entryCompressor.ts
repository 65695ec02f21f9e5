/**
 * Entry-wise ATOMO on the GPU (docs/design.md): the atoms are the gradient's
 * entries, so the whole round stays on the device and one submit does it:
 *   1. the water level and pᵢ = min(1, |gᵢ|/τ) per layer
 *      (shaders/entry/waterfill.wgsl: bisection on τ, then the
 *      closed form of the saturated set), with Σ p, the closed-form variance
 *      Σ g²(1/p − 1) and ‖g‖²;
 *   2. tᵢ ~ Bernoulli(pᵢ) from the layer's Philox stream, compaction of the
 *      kept indices and the gather of gᵢ/pᵢ (kernels/bernoulli.ts);
 *   3. the realised error ‖ĝ − g‖² (shaders/entry/realised_error.wgsl);
 * and only the kept (index, gᵢ/pᵢ) pairs, eight statistics per layer and
 * the losses are read back.
 *
 * Tolerance. The p used (and sent, as g/p) is the kernel's f32 p, so the
 * estimate is unbiased for it exactly. The bisection ends on adjacent f32
 * values of τ, i.e. it finds the CPU's saturated set, and p then comes from
 * the same closed form as on the CPU, so the GPU's p differs from the CPU's
 * f64 sorted water-filling (core/atomo/waterfilling.ts) by f32 rounding
 * only: |p_gpu − p_cpu| ≤ ENTRY_PROBABILITY_TOLERANCE·p_cpu (1e-5; measured
 * ≤ 2.5e-6), and Σ p = min(s, #non-zero) to the same relative tolerance
 * (measured ≤ 3e-7). An entry within rounding of τ may land on the other
 * side of the level, where p ≈ 1 on both sides, so this holds there too.
 * s ≥ #non-zero gives p = 1 exactly (every non-zero entry sent as itself);
 * zeros get p = 0 (a subnormal |g| that the device flushes to zero is
 * treated as a zero).
 */
import type { EntrySample } from '../../../core/atomo/types';
import { BernoulliKernel, type BernoulliJob } from '../kernels/bernoulli';
import { EntryKernels, type EntryKernelOptions } from '../kernels/entry';
import { dispatches, type Recordable } from '../runtime/dispatch';
import { StagingPool, type PendingRead } from '../runtime/pools';
import type { CompressedLayerStats } from '../../../core/training/compression';
import {
  encodeLossRead,
  meanLossOf,
  type CompressedGradient,
  type DeviceGradient,
  type GradientTensor,
  tensorsKey,
} from './tensors';

/** Relative difference of the GPU's pᵢ (and Σ p) from the CPU's exact water-filling that the kernel guarantees. */
export const ENTRY_PROBABILITY_TOLERANCE = 1e-5;

/** Largest layer the kernels take: counts are accumulated in f32, exact below 2²⁴. */
export const GPU_MAX_ENTRY_LAYER = 1 << 24;

/** f32 statistics per layer in the stats buffer (layout in entry/chunked_sum.wgsl, STATS). */
const STATS = 8;
const STAT = { sumP: 0, variance: 1, normSq: 2, realised: 3, tau: 4, saturated: 5, nonZero: 6, steps: 7 } as const;

interface LayerPlan {
  readonly n: number;
  readonly offset: number;
  /** The layer's gᵢ at offset 0, as the gather needs them. */
  readonly coefficients: GPUBuffer;
  readonly probabilities: GPUBuffer;
  readonly waterfillParams: GPUBuffer;
  readonly waterfill: Recordable;
  readonly realised: Recordable;
  readonly job: BernoulliJob;
}

interface Plan {
  readonly layers: LayerPlan[];
  readonly stats: GPUBuffer;
  readonly owned: GPUBuffer[];
}

/** The water-filling of one layer as the GPU computed it (for tests and diagnostics). */
export interface GpuEntryProbabilities {
  readonly probabilities: Float32Array;
  /** Σ p (f32, on the GPU). */
  readonly sum: number;
  /** The water level τ (0 when every non-zero entry is saturated). */
  readonly tau: number;
  readonly saturated: number;
  readonly nonZero: number;
  /** Bisection steps taken. */
  readonly steps: number;
}

/** Entry-wise ATOMO of a gradient on the GPU, for one set of tensors. */
export class GpuEntryCompressor {
  readonly #device: GPUDevice;
  readonly #kernels: EntryKernels;
  readonly #bernoulli: BernoulliKernel;
  readonly #staging: StagingPool;
  /** Plans by gradient buffer, then by tensor list. */
  readonly #plans = new Map<GPUBuffer, Map<string, Plan>>();

  /** Plans are made on first use per gradient buffer; `options` as in EntryKernels. */
  constructor(device: GPUDevice, options: EntryKernelOptions = {}) {
    this.#device = device;
    this.#kernels = new EntryKernels(device, options);
    this.#bernoulli = new BernoulliKernel(device);
    this.#staging = new StagingPool(device, 'Entry.staging');
  }

  #plan(tensors: readonly GradientTensor[], gradient: GPUBuffer): Plan {
    const key = tensorsKey(tensors);
    let byTensors = this.#plans.get(gradient);
    if (byTensors === undefined) {
      byTensors = new Map();
      this.#plans.set(gradient, byTensors);
    }
    const cached = byTensors.get(key);
    if (cached !== undefined) return cached;
    const device = this.#device;
    const owned: GPUBuffer[] = [];
    const buffer = (label: string, bytes: number, usage: GPUBufferUsageFlags): GPUBuffer => {
      const created = device.createBuffer({ label: `Entry.${label}`, size: Math.max(16, bytes), usage });
      owned.push(created);
      return created;
    };
    const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    const uniform = GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST;
    const stats = buffer('stats', tensors.length * STATS * 4, storage);
    const layers = tensors.map((tensor, slot): LayerPlan => {
      const n = tensor.shape[0] * tensor.shape[1];
      if (n >= GPU_MAX_ENTRY_LAYER) throw new RangeError(`GPU atomo-entry takes layers below 2^24 entries, got ${n}`);
      const coefficients = buffer(`coefficients[${slot}]`, n * 4, storage);
      const probabilities = buffer(`probabilities[${slot}]`, n * 4, storage);
      const waterfillParams = buffer(`waterfillParams[${slot}]`, 16, uniform);
      const realisedParams = buffer(`realisedParams[${slot}]`, 16, uniform);
      // The budget changes per call (written in #encode); these do not.
      device.queue.writeBuffer(realisedParams, 0, new Uint32Array([tensor.offset, n, slot, 0]));
      const job = this.#bernoulli.createJob(n, { values: true });
      return {
        n,
        offset: tensor.offset,
        coefficients,
        probabilities,
        waterfillParams,
        waterfill: dispatches(this.#kernels.waterfill(`${slot}`, [waterfillParams, gradient, probabilities, stats])),
        realised: dispatches(
          this.#kernels.realisedError(`${slot}`, [realisedParams, gradient, probabilities, job.keepMask, stats]),
        ),
        job,
      };
    });
    const plan: Plan = { layers, stats, owned };
    byTensors.set(key, plan);
    return plan;
  }

  /** Records the copies of gᵢ and the water-filling of every layer for budget s. */
  #encodeWaterfill(encoder: GPUCommandEncoder, plan: Plan, gradient: GPUBuffer, budget: number): void {
    if (!(budget > 0)) throw new RangeError(`ATOMO budget must be > 0, got ${budget}`);
    const pass = encoder.beginComputePass({ label: 'Entry.waterfill.pass' });
    plan.layers.forEach((layer, slot) => {
      // min(s, n): an infinite or huge budget means "every non-zero entry", and f32 must hold it.
      const params = new ArrayBuffer(16);
      new Uint32Array(params, 0, 3).set([layer.offset, layer.n, slot]);
      new Float32Array(params, 12, 1)[0] = Math.min(budget, layer.n);
      this.#device.queue.writeBuffer(layer.waterfillParams, 0, params);
      layer.waterfill.record(pass);
    });
    pass.end();
    for (const layer of plan.layers)
      encoder.copyBufferToBuffer(gradient, layer.offset * 4, layer.coefficients, 0, layer.n * 4);
  }

  /**
   * Compresses every tensor of `gradient` with budget s (expected entries
   * sent per layer); layer l draws from stream(l). One submit, one read-back
   * (two in the never-seen case of more kept entries than Σp + 8σ + 16).
   */
  async compress({ tensors, gradient, stream }: DeviceGradient, budget: number): Promise<CompressedGradient> {
    const plan = this.#plan(tensors, gradient.buffer);
    const device = this.#device;
    const encoder = device.createCommandEncoder({ label: 'Entry.compress' });
    this.#encodeWaterfill(encoder, plan, gradient.buffer, budget);
    plan.layers.forEach((layer, index) => {
      this.#bernoulli.encode(encoder, layer.job, stream(index), layer.probabilities, layer.n);
      this.#bernoulli.encodeGather(encoder, layer.job, layer.coefficients, layer.probabilities);
    });
    const pass = encoder.beginComputePass({ label: 'Entry.realised.pass' });
    for (const layer of plan.layers) layer.realised.record(pass);
    pass.end();
    const reads: { summary: PendingRead; indices: PendingRead; values: PendingRead; first: number }[] = plan.layers.map(
      (layer) => {
        // Σ p = min(s, n) at most and Var ≤ Σ p: the same margin as expectedKept, without reading p.
        const mean = Math.min(budget, layer.n);
        const first = Math.min(layer.n, Math.ceil(mean + 8 * Math.sqrt(mean) + 16));
        const compaction = layer.job.compaction;
        return {
          summary: this.#staging.encodeRead(encoder, compaction.summary, 0, 16),
          indices: this.#staging.encodeRead(encoder, compaction.indices, 0, first * 4),
          values: this.#staging.encodeRead(encoder, compaction.values!, 0, first * 4),
          first,
        };
      },
    );
    const statsRead = this.#staging.encodeRead(encoder, plan.stats, 0, plan.layers.length * STATS * 4);
    const lossRead = encodeLossRead(this.#staging, encoder, gradient);
    device.queue.submit([encoder.finish()]);
    const [mapped, statBytes, lossBytes] = await Promise.all([
      Promise.all(reads.map((read) => Promise.all([read.summary.map(), read.indices.map(), read.values.map()]))),
      statsRead.map(),
      lossRead.map(),
    ]);
    const stats = new Float32Array(statBytes);

    const layers = await Promise.all(
      plan.layers.map(async (layer, index): Promise<CompressedLayerStats> => {
        const [summary, indexBytes, valueBytes] = mapped[index]!;
        const count = new Uint32Array(summary)[0]!;
        let indices = new Uint32Array(indexBytes);
        let values = new Float32Array(valueBytes);
        if (count > reads[index]!.first) {
          // More kept than Σp + 8σ + 16: read them all (never wrong, only slower).
          const compaction = layer.job.compaction;
          const [allIndices, allValues] = await Promise.all([
            this.#staging.read(compaction.indices, 0, count * 4),
            this.#staging.read(compaction.values!, 0, count * 4),
          ]);
          indices = new Uint32Array(allIndices);
          values = new Float32Array(allValues);
        }
        const base = index * STATS;
        const kept = values.slice(0, count);
        snapToTau(kept, stats[base + STAT.tau]!);
        const sample: EntrySample = {
          scheme: 'atomo-entry',
          shape: tensors[index]!.shape,
          indices: indices.slice(0, count),
          values: kept,
        };
        return {
          sample,
          closedForm: stats[base + STAT.variance]!,
          realised: stats[base + STAT.realised]!,
          gradientNormSq: stats[base + STAT.normSq]!,
        };
      }),
    );
    return { loss: meanLossOf(lossBytes, gradient), layers };
  }

  /** Runs only the water-filling of every tensor of `gradient` (a flat f32 buffer) and reads p back: for tests. */
  async readProbabilities(
    tensors: readonly GradientTensor[],
    gradient: GPUBuffer,
    budget: number,
  ): Promise<GpuEntryProbabilities[]> {
    const plan = this.#plan(tensors, gradient);
    const encoder = this.#device.createCommandEncoder({ label: 'Entry.readProbabilities' });
    this.#encodeWaterfill(encoder, plan, gradient, budget);
    const reads = plan.layers.map((layer) => this.#staging.encodeRead(encoder, layer.probabilities, 0, layer.n * 4));
    const statsRead = this.#staging.encodeRead(encoder, plan.stats, 0, plan.layers.length * STATS * 4);
    this.#device.queue.submit([encoder.finish()]);
    const [bytes, statBytes] = await Promise.all([Promise.all(reads.map((read) => read.map())), statsRead.map()]);
    const stats = new Float32Array(statBytes);
    return bytes.map((probabilities, index) => {
      const base = index * STATS;
      return {
        probabilities: new Float32Array(probabilities),
        sum: stats[base + STAT.sumP]!,
        tau: stats[base + STAT.tau]!,
        saturated: stats[base + STAT.saturated]!,
        nonZero: stats[base + STAT.nonZero]!,
        steps: stats[base + STAT.steps]!,
      };
    });
  }

  /** Frees every plan's buffers. */
  destroy(): void {
    for (const byTensors of this.#plans.values()) {
      for (const plan of byTensors.values()) {
        for (const layer of plan.layers) layer.job.destroy();
        for (const owned of plan.owned) owned.destroy();
      }
    }
    this.#plans.clear();
    this.#bernoulli.destroy();
    this.#staging.destroy();
  }
}

/**
 * An unsaturated entry sends λ/p = ±τ, and the wire codes those as a sign
 * each (core/codec/entry.ts); the f32 division on the GPU (within 2.5 ulp)
 * leaves them a few ulps apart, which would cost each its own float. Values
 * within 2⁻²⁰ relative (8 ulp) of τ become exactly ±τ: a change of the same
 * size as the division's own error.
 */
export function snapToTau(values: Float32Array, tau: number): void {
  const level = Math.fround(tau);
  const tolerance = level * 2 ** -20;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (Math.abs(Math.abs(v) - level) <= tolerance) values[i] = v < 0 || Object.is(v, -0) ? -level : level;
  }
}
