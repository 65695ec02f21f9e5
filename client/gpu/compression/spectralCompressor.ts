/**
 * Spectral ATOMO on the GPU (docs/design.md, "GPU routes"). Which layers take
 * the factored route and how: spectralPlan.ts. Two round trips per round:
 *   1. the factors' QRs, the cores and the batched SVD; back come σ (a few
 *      dozen numbers per layer), the factors' scale exponents, the losses
 *      and, when the core SVD runs on the host, the cores themselves (at
 *      most batch × batch each), whose SVD the host takes with the CPU
 *      reference (core/linalg/svd.ts) and writes back;
 *   2. the lift of the factored layers' vectors (one product per side),
 *      water-filling on the CPU from σ, Bernoulli(p) with the Philox kernel,
 *      and a read-back of only the kept atoms' u, v.
 * No layer's full-gradient SVD runs for a factored layer.
 *
 * Where the core SVD runs ('auto', the default) is measured once per
 * adapter: the first compress times a few rounds on each side (after a
 * warm-up that compiles the pipelines) and keeps the faster for every
 * compressor on that adapter (spectralCoreChoice, shown by the training
 * benchmark).
 */
import { atomicRealisedError, atomicVariance, samplingProbabilities } from '../../../core/atomo';
import type { SpectralSample } from '../../../core/atomo/types';
import { svdJacobi } from '../../../core/linalg/svd';
import type { StreamId } from '../../../core/rng';
import type { CompressedLayerStats } from '../../../core/training/compression';
import { BernoulliKernel, expectedKept } from '../kernels/bernoulli';
import { CompactKernel } from '../kernels/compact';
import { FactoredKernels, MATRIX_STATE_BYTES, SCALE_EXP_WORD } from '../kernels/factored';
import { MatmulKernel } from '../kernels/matmul';
import { SvdKernel } from '../kernels/svd';
import { adapterKey } from '../runtime/adapter';
import { PlanCache } from '../runtime/dispatch';
import { StagingPool, type PendingRead } from '../runtime/pools';
import type { GpuGradient } from '../training/gpuBackend';
import { SpectralPlan, relativeCutoff, type SpectralCore, type SpectralKernels } from './spectralPlan';
import {
  encodeLossRead,
  meanLossOf,
  type CompressedGradient,
  type DeviceGradient,
  type GradientTensor,
  tensorsKey,
} from './tensors';

export type { SpectralCore } from './spectralPlan';

/** The SVDs of one gradient, with σ on the CPU and the vectors on the GPU. Opaque outside this file. */
export interface GpuSpectralDecomposition {
  /** Mean minibatch loss, read with σ. */
  readonly loss: number;
}

interface Decomposed extends GpuSpectralDecomposition {
  readonly plan: SpectralPlan;
  /** Each layer's k singular values (true scale, descending). */
  readonly sigmas: readonly Float64Array[];
  /** Whether the lift of this decomposition has been recorded. */
  lifted: boolean;
}

/** Options of the GPU spectral compressor. */
export interface SpectralCompressorOptions {
  /** Where the factored layers' core SVD runs; 'auto' (default) measures once per adapter. */
  readonly core?: SpectralCore | 'auto';
  /** The matmul kernel to share (one per device is enough); a new one by default. */
  readonly matmul?: MatmulKernel;
}

/** The core SVD's side chosen for an adapter, with the median compress times that chose it. */
export interface SpectralCoreChoice {
  readonly core: SpectralCore;
  readonly deviceMs: number;
  readonly hostMs: number;
}

/** Timed compress rounds per side when choosing (after one warm-up each). */
const CALIBRATION_ROUNDS = 3;

/**
 * Plans kept (one per gradient buffer, batch, core side and set of tensors): a tab's backends and a test's cases, with
 * room.
 */
const PLANS_KEPT = 8;

/** Choices by adapter (runtime/adapter.ts adapterKey): measured once per adapter in this page or process. */
const coreChoices = new Map<string, SpectralCoreChoice>();

/** The core side chosen for `device`'s adapter, once a compressor with core 'auto' has measured it. */
export function spectralCoreChoice(device: GPUDevice): SpectralCoreChoice | undefined {
  return coreChoices.get(adapterKey(device));
}

/** Spectral ATOMO of a gradient on the GPU, for any set of tensors. */
export class GpuSpectralCompressor {
  readonly #device: GPUDevice;
  readonly #kernels: SpectralKernels;
  readonly #core: SpectralCore | 'auto';
  readonly #staging: StagingPool;
  /**
   * Keyed by the gradient buffer's identity, not its label: a new backend of
   * the same kind and batch labels its buffer alike, and a plan bound to the
   * old, destroyed buffer must not serve it. Dropped plans are not destroyed
   * here: sample() records work on a plan's buffers after an await.
   */
  readonly #plans = new PlanCache<SpectralPlan>(PLANS_KEPT);

  /** Takes its kernels from the device's pipeline cache; plans are made on first use per batch size and core side. */
  constructor(device: GPUDevice, options: SpectralCompressorOptions = {}) {
    this.#device = device;
    this.#core = options.core ?? 'auto';
    this.#kernels = {
      matmul: options.matmul ?? new MatmulKernel(device),
      svd: new SvdKernel(device),
      factored: new FactoredKernels(device),
      bernoulli: new BernoulliKernel(device),
      compact: new CompactKernel(device),
    };
    this.#staging = new StagingPool(device, 'Spectral.staging');
  }

  /**
   * Compresses every tensor of `gradient` with budget s; layer l draws from
   * stream(l). Returns the samples, statistics and the mean loss (read with σ).
   */
  async compress(input: DeviceGradient, budget: number): Promise<CompressedGradient> {
    const core = this.#core === 'auto' ? await this.#chooseCore(input, budget) : this.#core;
    const decomposition = await this.decompose(input.tensors, input.gradient, core);
    return { loss: decomposition.loss, layers: await this.sample(decomposition, budget, input.stream) };
  }

  /** The adapter's core side: measured on this gradient the first time (every round it runs is a valid compression). */
  async #chooseCore(input: DeviceGradient, budget: number): Promise<SpectralCore> {
    const known = spectralCoreChoice(this.#device);
    if (known !== undefined) return known.core;
    const median = async (core: SpectralCore): Promise<number> => {
      const once = async () => {
        const decomposition = await this.decompose(input.tensors, input.gradient, core);
        await this.sample(decomposition, budget, input.stream);
      };
      await once(); // compiles the pipelines, makes the plan
      const times: number[] = [];
      for (let i = 0; i < CALIBRATION_ROUNDS; i++) {
        const start = performance.now();
        await once();
        times.push(performance.now() - start);
      }
      return times.sort((a, b) => a - b)[CALIBRATION_ROUNDS >> 1]!;
    };
    const deviceMs = await median('device');
    const hostMs = await median('host');
    const choice: SpectralCoreChoice = { core: deviceMs <= hostMs ? 'device' : 'host', deviceMs, hostMs };
    coreChoices.set(adapterKey(this.#device), choice);
    return choice.core;
  }

  /** Round trip 1: every layer's σ (and, for the host core, its core SVD); the vectors stay on the GPU. */
  async decompose(
    tensors: readonly GradientTensor[],
    gradient: GpuGradient,
    core: SpectralCore = this.#defaultCore(),
  ): Promise<GpuSpectralDecomposition> {
    const key = `${this.#plans.id(gradient.buffer)}|${gradient.batch}|${core}|${tensorsKey(tensors)}`;
    const plan = this.#plans.get(key, () => new SpectralPlan(this.#device, this.#kernels, tensors, gradient, core));
    const encoder = this.#device.createCommandEncoder({ label: 'Spectral.decompose' });
    plan.encodeDecompose(encoder);
    const svd = plan.svd;
    const sigmaRead =
      svd === null ? null : this.#staging.encodeRead(encoder, svd.singularValues, 0, svd.singularValues.size);
    const stateRead = this.#staging.encodeRead(encoder, plan.states, 0, plan.factored.length * 2 * MATRIX_STATE_BYTES);
    const coreRead = core === 'host' ? this.#staging.encodeRead(encoder, plan.cores, 0, plan.coreFloats * 4) : null;
    const lossRead = encodeLossRead(this.#staging, encoder, gradient);
    this.#device.queue.submit([encoder.finish()]);
    const [sigmaBytes, stateBytes, coreBytes, lossBytes] = await Promise.all([
      sigmaRead?.map(),
      stateRead.map(),
      coreRead?.map(),
      lossRead.map(),
    ]);
    const svdSigma = sigmaBytes === undefined ? new Float32Array(0) : new Float32Array(sigmaBytes);
    const scaleExp = new Int32Array(stateBytes);
    const exponent = (state: number) => scaleExp[(state * MATRIX_STATE_BYTES) / 4 + SCALE_EXP_WORD]!;
    const hostCores = coreBytes === undefined ? null : this.#hostCoreSvds(plan, new Float32Array(coreBytes));
    const sigmas = plan.layers.map((layer) => {
      const f = layer.factored;
      if (f === null) return Float64Array.from(svdSigma.subarray(layer.sOffset, layer.sOffset + layer.k));
      // The core was C′ = C·2^−(eₓ+e_Δ): σ = σ′·2^(eₓ+e_Δ), exactly.
      const scale = 2 ** (exponent(f.xState) + exponent(f.dState));
      const scaled =
        hostCores === null ? svdSigma.subarray(layer.sOffset, layer.sOffset + layer.k) : hostCores.get(f.index)!;
      return Float64Array.from(scaled, (s) => s * scale);
    });
    const decomposed: Decomposed = { plan, sigmas, loss: meanLossOf(lossBytes, gradient), lifted: false };
    return decomposed;
  }

  /** The core 'auto' falls back to before anything is measured, and for callers that decompose directly. */
  #defaultCore(): SpectralCore {
    if (this.#core !== 'auto') return this.#core;
    return spectralCoreChoice(this.#device)?.core ?? 'device';
  }

  /**
   * The host half of the host core route: the SVD of every core C′ (read
   * back, kx × kd) with the CPU reference, written to the plan's host core
   * buffers in the device SVD's layout (u atom-major, σ′ descending, v
   * atom-major) for the lift. Returns σ′ per factored layer.
   */
  #hostCoreSvds(plan: SpectralPlan, cores: Float32Array): Map<number, Float64Array> {
    const out = new Map<number, Float64Array>();
    const queue = this.#device.queue;
    for (const f of plan.factored) {
      const result = svdJacobi(cores.subarray(f.coreOffset, f.coreOffset + f.kx * f.kd), f.kx, f.kd);
      const k = result.r;
      const u = new Float32Array(k * f.kx);
      const v = new Float32Array(k * f.kd);
      for (let t = 0; t < k; t++) {
        for (let i = 0; i < f.kx; i++) u[t * f.kx + i] = result.u[i * k + t]!;
        for (let j = 0; j < f.kd; j++) v[t * f.kd + j] = result.v[j * k + t]!;
      }
      queue.writeBuffer(plan.hostU, f.hostU * 4, u);
      queue.writeBuffer(plan.hostS, f.hostS * 4, Float32Array.from(result.singularValues));
      queue.writeBuffer(plan.hostV, f.hostV * 4, v);
      out.set(f.index, result.singularValues);
    }
    return out;
  }

  /** Records the lift of a decomposition into `encoder` the first time it is sampled or read. */
  #liftOnce(decomposition: Decomposed, encoder: GPUCommandEncoder): void {
    if (decomposition.lifted) return;
    decomposition.plan.encodeLift(encoder);
    decomposition.lifted = true;
  }

  /**
   * Every layer's full decomposition (u atom-major k × rows, σ, v k × cols): for tests, and what a byte budget's
   * host split draws from (byteBudgetCompressor.ts).
   */
  async readDecomposition(
    decomposition: GpuSpectralDecomposition,
  ): Promise<{ k: number; u: Float32Array; sigma: Float64Array; v: Float32Array }[]> {
    const decomposed = decomposition as Decomposed;
    const encoder = this.#device.createCommandEncoder({ label: 'Spectral.readDecomposition' });
    this.#liftOnce(decomposed, encoder);
    const reads = decomposed.plan.layers.map((layer) => [
      this.#staging.encodeRead(encoder, layer.u.buffer, layer.u.offset * 4, layer.k * layer.rows * 4),
      this.#staging.encodeRead(encoder, layer.v.buffer, layer.v.offset * 4, layer.k * layer.cols * 4),
    ]);
    this.#device.queue.submit([encoder.finish()]);
    return Promise.all(
      decomposed.plan.layers.map(async (layer, index) => {
        const [u, v] = await Promise.all(reads[index]!.map((read) => read.map()));
        return { k: layer.k, u: new Float32Array(u!), sigma: decomposed.sigmas[index]!, v: new Float32Array(v!) };
      }),
    );
  }

  /**
   * Round trip 2: water-filling on the CPU from σ, Bernoulli(p) on the GPU
   * from stream(l), and a read-back of the kept atoms only. Can be repeated
   * on one decomposition (until the next decompose).
   */
  async sample(
    decomposition: GpuSpectralDecomposition,
    budget: number,
    stream: (layer: number) => StreamId,
  ): Promise<CompressedLayerStats[]> {
    const decomposed = decomposition as Decomposed;
    const { plan, sigmas } = decomposed;
    const device = this.#device;
    // Water-filling on the CPU (few numbers), then round trip 2: the lift, Bernoulli and the kept atoms.
    const sampling = plan.layers.map((layer, index) => {
      const sigma = sigmas[index]!;
      // σ below max(rows, cols)·ε·σ₀ is rounding noise, not an atom (the CPU reference's rule at f32).
      const cutoff = relativeCutoff(layer.rows, layer.cols) * (sigma[0] ?? 0);
      let rank = 0;
      while (rank < layer.k && sigma[rank]! > cutoff) rank++;
      const lambda = Float64Array.from(sigma.subarray(0, rank));
      const p = rank > 0 ? samplingProbabilities(lambda, budget) : new Float64Array(0);
      const p32 = new Float32Array(layer.k);
      for (let i = 0; i < rank; i++) p32[i] = p[i]!;
      return { index, sigma, rank, lambda, p32 };
    });
    const readEncoder = device.createCommandEncoder({ label: 'Spectral.sample' });
    this.#liftOnce(decomposed, readEncoder);
    const reads: { summary: PendingRead; indices: PendingRead; u: PendingRead; v: PendingRead; first: number }[] = [];
    for (const { index, p32 } of sampling) {
      const layer = plan.layers[index]!;
      device.queue.writeBuffer(layer.probabilities, 0, p32);
      this.#kernels.bernoulli.encode(readEncoder, layer.job, stream(index), layer.probabilities, layer.k);
      const pass = readEncoder.beginComputePass({ label: 'Spectral.gather.pass' });
      layer.gather.record(pass);
      pass.end();
    }
    for (const { index, p32 } of sampling) {
      const layer = plan.layers[index]!;
      const first = Math.min(layer.k, expectedKept(p32));
      reads.push({
        summary: this.#staging.encodeRead(readEncoder, layer.job.compaction.summary, 0, 16),
        indices: this.#staging.encodeRead(readEncoder, layer.job.compaction.indices, 0, first * 4),
        u: this.#staging.encodeRead(readEncoder, layer.packedU, 0, first * layer.rows * 4),
        v: this.#staging.encodeRead(readEncoder, layer.packedV, 0, first * layer.cols * 4),
        first,
      });
    }
    device.queue.submit([readEncoder.finish()]);
    const mapped = await Promise.all(
      reads.map(async (read) => ({
        first: read.first,
        parts: await Promise.all([read.summary.map(), read.indices.map(), read.u.map(), read.v.map()]),
      })),
    );

    const layers: CompressedLayerStats[] = [];
    for (const { index, sigma, rank, lambda, p32 } of sampling) {
      const layer = plan.layers[index]!;
      const { first, parts } = mapped[index]!;
      const count = new Uint32Array(parts[0])[0]!;
      let indices = new Uint32Array(parts[1]);
      let u = new Float32Array(parts[2]);
      let v = new Float32Array(parts[3]);
      if (count > first) {
        // More kept than Σp + 8σ: read them all (never seen in practice, but never wrong).
        const [allIndices, allU, allV] = await Promise.all([
          this.#staging.read(layer.job.compaction.indices, 0, count * 4),
          this.#staging.read(layer.packedU, 0, count * layer.rows * 4),
          this.#staging.read(layer.packedV, 0, count * layer.cols * 4),
        ]);
        indices = new Uint32Array(allIndices);
        u = new Float32Array(allU);
        v = new Float32Array(allV);
      }
      const scales = new Float32Array(count);
      for (let j = 0; j < count; j++) scales[j] = lambda[indices[j]!]! / p32[indices[j]!]!;
      let normSq = 0;
      for (let i = 0; i < layer.k; i++) normSq += sigma[i]! * sigma[i]!;
      let cutOff = 0;
      for (let i = rank; i < layer.k; i++) cutOff += sigma[i]! * sigma[i]!;
      // Orthonormal atoms: the error in σ-space, as the CPU scheme computes it (the compaction keeps the indices
      // increasing),
      // plus the σ² below the rank cut-off, dropped.
      const realised = atomicRealisedError(lambda, indices.subarray(0, count), scales, cutOff);
      const sample: SpectralSample = {
        scheme: 'atomo-svd',
        shape: [layer.rows, layer.cols],
        count,
        u: u.slice(0, count * layer.rows),
        v: v.slice(0, count * layer.cols),
        scales,
      };
      layers.push({
        sample,
        closedForm: atomicVariance(lambda, Float64Array.from(p32.subarray(0, rank))),
        realised,
        gradientNormSq: normSq,
      });
    }
    return layers;
  }

  /** Frees every plan's buffers. */
  destroy(): void {
    this.#plans.destroyAll();
    this.#kernels.bernoulli.destroy();
    this.#staging.destroy();
  }
}
