/**
 * Spectral ATOMO on the GPU (docs/design.md): the SVD of every layer gradient,
 * batched, water-filling on the CPU from the σ read back (a few dozen numbers
 * per layer), Bernoulli(p) with the Philox kernel, and a read-back of only
 * the kept atoms' u, v.
 *
 * Low-rank route. A dense layer's weight gradient is G = aᵀ·d (a: B × rows,
 * the layer input; d: B × cols), so rank G ≤ B. When B is below both sides
 * (784×128 at B = 32), the SVD comes from two small ones instead of G's:
 *   1. a = U_a Σ_a V_aᵀ (B × rows: short side B, cheap Jacobi);
 *   2. S = V_aᵀ G (B × cols), exact because G's column space lies in V_a's;
 *   3. S = U_s Σ V_sᵀ;  then G = (V_a U_s) Σ V_sᵀ.
 * Step 1 runs for every low-rank layer in one SvdBatch, step 3 together with
 * the direct SVDs of the other layers (biases, small or convolution kernels)
 * in a second one, all in one command buffer with the products between them.
 *
 * Two read-backs per round: σ (and the losses), then the kept atoms.
 */
import { atomicVariance, samplingProbabilities } from '../../../core/atomo';
import type { SpectralSample } from '../../../core/atomo/types';
import type { StreamId } from '../../../core/rng';
import { BernoulliKernel, expectedKept, type BernoulliJob } from '../kernels/bernoulli';
import { CompactKernel } from '../kernels/compact';
import { MatmulKernel, type MatmulPlan } from '../kernels/matmul';
import { SvdKernel, type SvdBatch } from '../kernels/svd';
import { F32_EPSILON } from '../kernels/svdPlan';
import { dispatches, type BufferSlice, type Recordable } from '../runtime/dispatch';
import { StagingPool, type PendingRead } from '../runtime/pools';
import type { GpuGradient } from '../training/gpuBackend';
import type { CompressedLayerStats } from '../../../core/training/compression';
import { encodeLossRead, meanLossOf, type CompressedGradient, type DeviceGradient, type GradientTensor } from './tensors';

interface LayerPlan {
  readonly rows: number;
  readonly cols: number;
  /** Atoms (triplets) the SVD returns. */
  readonly k: number;
  /** σ of this layer at batch2.singularValues[sOffset …]. */
  readonly sOffset: number;
  readonly probabilities: GPUBuffer;
  readonly job: BernoulliJob;
  readonly packedU: GPUBuffer;
  readonly packedV: GPUBuffer;
  readonly gather: Recordable;
  /** Where the full left and right vectors are (atom-major). */
  readonly u: BufferSlice;
  readonly v: BufferSlice;
}

/** The SVDs of one gradient, on the GPU, with σ on the CPU. Opaque outside this file. */
export interface GpuSpectralDecomposition {
  readonly sigmas: Float32Array;
  /** Mean minibatch loss, read with σ. */
  readonly loss: number;
}

interface Decomposed extends GpuSpectralDecomposition {
  readonly plan: SpectralPlan;
}

/** Options of the SVD batches. */
const SVD_OPTIONS = { maxSweeps: 30 } as const;

/** Buffers and recorded work for one set of tensors and one batch size. */
class SpectralPlan {
  readonly first: SvdBatch | null;
  readonly second: SvdBatch;
  readonly layers: LayerPlan[] = [];
  readonly #owned: GPUBuffer[] = [];
  readonly #copies: { from: BufferSlice; to: number; floats: number; first: boolean }[] = [];
  readonly #products: MatmulPlan[] = [];
  readonly #lifts: MatmulPlan[] = [];

  constructor(
    device: GPUDevice,
    matmul: MatmulKernel,
    bernoulli: BernoulliKernel,
    tensors: readonly GradientTensor[],
    gradient: GPUBuffer,
    factors: ReadonlyMap<number, { a: BufferSlice; batch: number }>,
  ) {
    const svd = new SvdKernel(device);
    const owned = this.#owned;
    const storage = (label: string, floats: number): GPUBuffer => {
      const buffer = device.createBuffer({
        label: `Spectral.${label}`,
        size: Math.max(16, floats * 4),
        usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC,
      });
      owned.push(buffer);
      return buffer;
    };
    // Which tensors take the low-rank route: a known factorisation with B below both sides.
    const lowRank = tensors.map((tensor, index) => {
      const factor = factors.get(index);
      return factor !== undefined && factor.batch < Math.min(...tensor.shape) ? factor : null;
    });
    const firstShapes = tensors.flatMap((tensor, index) => (lowRank[index] === null ? [] : [{ rows: lowRank[index]!.batch, cols: tensor.shape[0] }]));
    this.first = firstShapes.length > 0 ? svd.createBatch(firstShapes, SVD_OPTIONS) : null;
    let firstIndex = 0;
    const firstOf = tensors.map((_, index) => (lowRank[index] === null ? -1 : firstIndex++));
    const secondShapes = tensors.map((tensor, index) => {
      const j = firstOf[index]!;
      return j < 0 ? { rows: tensor.shape[0], cols: tensor.shape[1] } : { rows: this.first!.plan.matrices[j]!.k, cols: tensor.shape[1] };
    });
    this.second = svd.createBatch(secondShapes, SVD_OPTIONS);
    const compact = new CompactKernel(device);

    tensors.forEach((tensor, index) => {
      const [rows, cols] = tensor.shape;
      const p2 = this.second.plan.matrices[index]!;
      const j = firstOf[index]!;
      let u: BufferSlice;
      if (j < 0) {
        this.#copies.push({ from: { buffer: gradient, offset: tensor.offset }, to: p2.inputOffset, floats: rows * cols, first: false });
        u = { buffer: this.second.u, offset: p2.uOffset };
      } else {
        const p1 = this.first!.plan.matrices[j]!;
        const factor = lowRank[index]!;
        this.#copies.push({ from: factor.a, to: p1.inputOffset, floats: factor.batch * rows, first: true });
        // S = V_aᵀ G: V_a's atom-major rows are V_aᵀ, k1 × rows.
        this.#products.push(
          matmul.plan(
            { m: p1.k, n: cols, k: rows },
            { a: this.first!.v, b: gradient, c: this.second.input, offsetA: p1.vOffset, offsetB: tensor.offset, offsetC: p2.inputOffset },
          ),
        );
        // U = V_a U_s, atom-major: (k2 × k1 rows of U_sᵀ) · (k1 × rows of V_aᵀ).
        const lifted = storage(`lifted[${index}]`, p2.k * rows);
        this.#lifts.push(
          matmul.plan({ m: p2.k, n: rows, k: p1.k }, { a: this.second.u, b: this.first!.v, c: lifted, offsetA: p2.uOffset, offsetB: p1.vOffset }),
        );
        u = { buffer: lifted, offset: 0 };
      }
      const k = p2.k;
      const job = bernoulli.createJob(k);
      const packedU = storage(`packedU[${index}]`, k * rows);
      const packedV = storage(`packedV[${index}]`, k * cols);
      const v: BufferSlice = { buffer: this.second.v, offset: p2.vOffset };
      const gather = dispatches(
        compact.planGatherRows(owned, job.compaction, u, packedU, rows, k),
        compact.planGatherRows(owned, job.compaction, v, packedV, cols, k),
      );
      this.layers.push({ rows, cols, k, sOffset: p2.sOffset, probabilities: storage(`probabilities[${index}]`, k), job, packedU, packedV, gather, u, v });
    });
  }

  /** Records the SVDs of every layer (copies, batch 1, S = V_aᵀG, batch 2, lifts). */
  encodeSvd(encoder: GPUCommandEncoder): void {
    for (const copy of this.#copies) {
      const target = copy.first ? this.first!.input : this.second.input;
      encoder.copyBufferToBuffer(copy.from.buffer, copy.from.offset * 4, target, copy.to * 4, copy.floats * 4);
    }
    this.first?.encode(encoder);
    if (this.#products.length > 0) {
      const pass = encoder.beginComputePass({ label: 'Spectral.core.pass' });
      for (const product of this.#products) product.record(pass);
      pass.end();
    }
    this.second.encode(encoder);
    if (this.#lifts.length > 0) {
      const pass = encoder.beginComputePass({ label: 'Spectral.lift.pass' });
      for (const lift of this.#lifts) lift.record(pass);
      pass.end();
    }
  }

  destroy(): void {
    this.first?.destroy();
    this.second.destroy();
    for (const layer of this.layers) layer.job.destroy();
    for (const buffer of this.#owned) buffer.destroy();
  }
}

/** Spectral ATOMO of a gradient on the GPU, for one set of tensors. */
export class GpuSpectralCompressor {
  readonly #device: GPUDevice;
  readonly #matmul: MatmulKernel;
  readonly #bernoulli: BernoulliKernel;
  readonly #staging: StagingPool;
  readonly #plans = new Map<string, SpectralPlan>();

  /** Compiles nothing new beyond the shared kernels; plans are made on first use per batch size. */
  constructor(device: GPUDevice, matmul?: MatmulKernel) {
    this.#device = device;
    this.#matmul = matmul ?? new MatmulKernel(device);
    this.#bernoulli = new BernoulliKernel(device);
    this.#staging = new StagingPool(device, 'Spectral.staging');
  }

  /**
   * Compresses every tensor of `gradient` with budget s; layer l draws from
   * stream(l). Returns the samples, statistics and the mean loss (read with σ).
   */
  async compress({ tensors, gradient, stream }: DeviceGradient, budget: number): Promise<CompressedGradient> {
    const decomposition = await this.decompose(tensors, gradient);
    return { loss: decomposition.loss, layers: await this.sample(decomposition, budget, stream) };
  }

  /** Round trip 1: every layer's SVD on the GPU; σ and the mean loss come back, the vectors stay. */
  async decompose(tensors: readonly GradientTensor[], gradient: GpuGradient): Promise<GpuSpectralDecomposition> {
    const key = `${gradient.buffer.label}|${gradient.batch}|${tensors.map((t) => `${t.offset}:${t.shape.join('x')}`).join(',')}`;
    let plan = this.#plans.get(key);
    if (plan === undefined) {
      plan = new SpectralPlan(this.#device, this.#matmul, this.#bernoulli, tensors, gradient.buffer, gradient.factors);
      this.#plans.set(key, plan);
    }
    const device = this.#device;
    const encoder = device.createCommandEncoder({ label: 'Spectral.svd' });
    plan.encodeSvd(encoder);
    const sigmaRead = this.#staging.encodeRead(encoder, plan.second.singularValues, 0, plan.second.singularValues.size);
    const lossRead = encodeLossRead(this.#staging, encoder, gradient);
    device.queue.submit([encoder.finish()]);
    const [sigmaBytes, lossBytes] = await Promise.all([sigmaRead.map(), lossRead.map()]);
    const decomposed: Decomposed = { plan, sigmas: new Float32Array(sigmaBytes), loss: meanLossOf(lossBytes, gradient) };
    return decomposed;
  }

  /** Every layer's full decomposition (u atom-major k × rows, σ, v k × cols), for tests. */
  async readDecomposition(decomposition: GpuSpectralDecomposition): Promise<{ k: number; u: Float32Array; sigma: Float32Array; v: Float32Array }[]> {
    const { plan, sigmas } = decomposition as Decomposed;
    return Promise.all(
      plan.layers.map(async (layer) => ({
        k: layer.k,
        u: new Float32Array(await this.#staging.read(layer.u.buffer, layer.u.offset * 4, layer.k * layer.rows * 4)),
        sigma: sigmas.slice(layer.sOffset, layer.sOffset + layer.k),
        v: new Float32Array(await this.#staging.read(layer.v.buffer, layer.v.offset * 4, layer.k * layer.cols * 4)),
      })),
    );
  }

  /**
   * Round trip 2: water-filling on the CPU from σ, Bernoulli(p) on the GPU
   * from stream(l), and a read-back of the kept atoms only. Can be repeated
   * on one decomposition (until the next decompose).
   */
  async sample(decomposition: GpuSpectralDecomposition, budget: number, stream: (layer: number) => StreamId): Promise<CompressedLayerStats[]> {
    const { plan, sigmas } = decomposition as Decomposed;
    const device = this.#device;
    // Water-filling on the CPU (few numbers), then round trip 2: Bernoulli and the kept atoms.
    const sampling = plan.layers.map((layer, index) => {
      const sigma = sigmas.subarray(layer.sOffset, layer.sOffset + layer.k);
      // σ below max(rows, cols)·ε·σ₀ is rounding noise, not an atom (the CPU reference's rule at f32).
      const cutoff = Math.max(layer.rows, layer.cols) * F32_EPSILON * (sigma[0] ?? 0);
      let rank = 0;
      while (rank < layer.k && sigma[rank]! > cutoff) rank++;
      const lambda = Float64Array.from(sigma.subarray(0, rank));
      const p = rank > 0 ? samplingProbabilities(lambda, budget) : new Float64Array(0);
      const p32 = new Float32Array(layer.k);
      for (let i = 0; i < rank; i++) p32[i] = p[i]!;
      return { index, sigma, rank, lambda, p32 };
    });
    const readEncoder = device.createCommandEncoder({ label: 'Spectral.sample' });
    const reads: { summary: PendingRead; indices: PendingRead; u: PendingRead; v: PendingRead; first: number }[] = [];
    for (const { index, p32 } of sampling) {
      const layer = plan.layers[index]!;
      device.queue.writeBuffer(layer.probabilities, 0, p32);
      this.#bernoulli.encode(readEncoder, layer.job, stream(index), layer.probabilities, layer.k);
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
      reads.map(async (read) => ({ first: read.first, parts: await Promise.all([read.summary.map(), read.indices.map(), read.u.map(), read.v.map()]) })),
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
      const keptFlags = new Uint8Array(rank);
      for (let j = 0; j < count; j++) {
        const i = indices[j]!;
        keptFlags[i] = 1;
        scales[j] = lambda[i]! / p32[i]!;
      }
      // Orthonormal atoms: ‖ĝ − g‖² = Σᵢ (scaleᵢtᵢ − λᵢ)², plus the σ below the rank cut-off, dropped.
      let realised = 0;
      let normSq = 0;
      for (let i = 0; i < layer.k; i++) normSq += sigma[i]! * sigma[i]!;
      for (let i = 0; i < rank; i++) {
        const estimate = keptFlags[i] === 1 ? Math.fround(lambda[i]! / p32[i]!) : 0;
        realised += (estimate - lambda[i]!) ** 2;
      }
      for (let i = rank; i < layer.k; i++) realised += sigma[i]! * sigma[i]!;
      const sample: SpectralSample = {
        scheme: 'atomo-svd',
        shape: [layer.rows, layer.cols],
        count,
        u: u.slice(0, count * layer.rows),
        v: v.slice(0, count * layer.cols),
        scales,
      };
      layers.push({ sample, closedForm: atomicVariance(lambda, Float64Array.from(p32.subarray(0, rank))), realised, gradientNormSq: normSq });
    }
    return layers;
  }

  /** Frees every plan's buffers. */
  destroy(): void {
    for (const plan of this.#plans.values()) plan.destroy();
    this.#plans.clear();
    this.#bernoulli.destroy();
    this.#staging.destroy();
  }
}
