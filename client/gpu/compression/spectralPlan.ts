/**
 * The buffers and recorded work of spectral ATOMO on the GPU for one set of
 * tensors, one batch size and one place for the core SVD (docs/design.md,
 * "GPU routes"). Made once, recorded every round by spectralCompressor.ts.
 *
 * Factored layers (a dense weight gradient G = Xᵀ·Δ whose batch is below
 * both sides, core/atomo's spectralRoute):
 *   1. X and Δ are copied into one work buffer and both thin QRs run in one
 *      dispatch (kernels/factored.ts, qr.wgsl: R′ only, power-of-two scaled);
 *   2. the core C′ = R′_x R′_Δᵀ (batch × batch at most) is one matmul,
 *      written into the device SVD batch (core 'device') or into a buffer
 *      the host reads back and decomposes (core 'host');
 *   3. after σ is known, lift.wgsl turns the core's vectors into the
 *      coefficients M_uᵀ, M_vᵀ, and U = Xᵀ M_u, V = Δᵀ M_v are one matmul
 *      each, from the factors the backend holds.
 * Direct layers (biases, small or convolution kernels, and dense layers
 * whose batch is not below both sides) take the batched Jacobi SVD of their
 * gradient (kernels/svd.ts), in the same batch as the device cores.
 */
import { spectralRoute } from '../../../core/atomo';
import type { BernoulliJob, BernoulliKernel } from '../kernels/bernoulli';
import type { CompactKernel } from '../kernels/compact';
import { MATRIX_STATE_BYTES, type FactoredKernels, type LiftJob, type QrJob } from '../kernels/factored';
import type { MatmulKernel, MatmulPlan } from '../kernels/matmul';
import type { SvdBatch, SvdKernel } from '../kernels/svd';
import { F32_EPSILON } from '../kernels/svdPlan';
import { dispatches, type BufferSlice, type Dispatch, type Recordable } from '../runtime/dispatch';
import type { GpuGradient } from '../training/gpuBackend';
import type { GradientTensor } from './tensors';

/**
 * Where the B×B core SVD of the factored layers runs: the device's batched Jacobi, or the host's (core/linalg/svd.ts).
 */
export type SpectralCore = 'device' | 'host';

/** Kernels a plan records (one set per device, shared by its plans). */
export interface SpectralKernels {
  readonly matmul: MatmulKernel;
  readonly svd: SvdKernel;
  readonly factored: FactoredKernels;
  readonly bernoulli: BernoulliKernel;
  readonly compact: CompactKernel;
}

/** Options of the SVD batches. */
const SVD_OPTIONS = { maxSweeps: 30 } as const;

/** One factored layer: its QRs, its core and its lift. */
export interface FactoredLayer {
  /** Index of the tensor (and of its LayerPlan). */
  readonly index: number;
  readonly batch: number;
  /** The core's shape: rows of R′_x (min(rows, B)) × rows of R′_Δ (min(cols, B)). */
  readonly kx: number;
  readonly kd: number;
  /** MatrixState indices of the two QRs (scale exponents). */
  readonly xState: number;
  readonly dState: number;
  /**
   * Host core: C′ at coreOffset in `cores` (kx × kd row-major); U_c, σ′, V_c written at these offsets of the host
   * core buffers.
   */
  readonly coreOffset: number;
  readonly hostU: number;
  readonly hostS: number;
  readonly hostV: number;
}

/** One tensor's sampling state and where its singular vectors end up (atom-major). */
export interface LayerPlan {
  readonly rows: number;
  readonly cols: number;
  /** Atoms (triplets) the decomposition has. */
  readonly k: number;
  /** Direct layers and device cores: σ at `sOffset` of the SVD batch's σ (else -1). */
  readonly sOffset: number;
  readonly factored: FactoredLayer | null;
  readonly probabilities: GPUBuffer;
  readonly job: BernoulliJob;
  readonly packedU: GPUBuffer;
  readonly packedV: GPUBuffer;
  readonly gather: Recordable;
  readonly u: BufferSlice;
  readonly v: BufferSlice;
}

/** Buffers and recorded work for one set of tensors, one batch size and one core route. */
export class SpectralPlan {
  readonly core: SpectralCore;
  readonly layers: LayerPlan[] = [];
  readonly factored: FactoredLayer[] = [];
  /** The batched SVD of the direct layers (and of the cores, on the device route); null when there is none. */
  readonly svd: SvdBatch | null;
  /** QR states (MatrixState, 8 words each): scaleExp of every factor. */
  readonly states: GPUBuffer;
  /** Host core route: every C′, read back. */
  readonly cores: GPUBuffer;
  readonly coreFloats: number;
  /** Host core route: U_c (atom-major), σ′ and V_c of every core, written by the host. */
  readonly hostU: GPUBuffer;
  readonly hostS: GPUBuffer;
  readonly hostV: GPUBuffer;
  readonly #device: GPUDevice;
  readonly #owned: GPUBuffer[] = [];
  readonly #copies: { from: BufferSlice; to: number; floats: number }[] = [];
  readonly #work: GPUBuffer;
  readonly #decompose: Recordable[] = [];
  readonly #lift: Recordable[] = [];
  readonly #directCopies: { from: BufferSlice; to: number; floats: number }[] = [];
  /** Where each factored layer's lifted U and V go. */
  readonly #lifted = new Map<number, { u: BufferSlice; v: BufferSlice }>();

  constructor(
    device: GPUDevice,
    kernels: SpectralKernels,
    tensors: readonly GradientTensor[],
    gradient: GpuGradient,
    core: SpectralCore,
  ) {
    this.#device = device;
    this.core = core;
    const storage = (label: string, floats: number): GPUBuffer => {
      const buffer = device.createBuffer({
        label: `Spectral.${label}`,
        size: Math.max(16, floats * 4),
        usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC,
      });
      this.#owned.push(buffer);
      return buffer;
    };
    const factorsOf = (index: number) => {
      const factor = gradient.factors.get(index);
      const tensor = tensors[index]!;
      return factor !== undefined && spectralRoute(tensor.shape, factor.batch) === 'factored' ? factor : null;
    };

    // Offsets of every factored layer's pieces, then the shared buffers.
    const qrJobs: QrJob[] = [];
    let work = 0;
    let rFloats = 0;
    let coreFloats = 0;
    let liftFloats = 0;
    let hostU = 0;
    let hostS = 0;
    let hostV = 0;
    const liftOffsets: number[] = [];
    const rOffsets: [number, number][] = [];
    const factoredOf = new Map<number, FactoredLayer>();
    tensors.forEach((tensor, index) => {
      const factor = factorsOf(index);
      if (factor === null) return;
      const [rows, cols] = tensor.shape;
      const batch = factor.batch;
      const kx = Math.min(rows, batch);
      const kd = Math.min(cols, batch);
      const k = Math.min(kx, kd);
      const state = qrJobs.length;
      this.#copies.push(
        { from: factor.a, to: work, floats: batch * rows },
        { from: factor.d, to: work + batch * rows, floats: batch * cols },
      );
      qrJobs.push({ workOffset: work, length: rows, batch, rOffset: rFloats, state });
      qrJobs.push({
        workOffset: work + batch * rows,
        length: cols,
        batch,
        rOffset: rFloats + kx * batch,
        state: state + 1,
      });
      rOffsets.push([rFloats, rFloats + kx * batch]);
      work += batch * (rows + cols);
      rFloats += (kx + kd) * batch;
      const layer: FactoredLayer = {
        index,
        batch,
        kx,
        kd,
        xState: state,
        dState: state + 1,
        coreOffset: coreFloats,
        hostU,
        hostS,
        hostV,
      };
      coreFloats += kx * kd;
      hostU += k * kx;
      hostS += k;
      hostV += k * kd;
      liftOffsets.push(liftFloats);
      liftFloats += k * batch;
      this.factored.push(layer);
      factoredOf.set(index, layer);
    });
    this.coreFloats = coreFloats;
    this.#work = storage('work', work);
    const r = storage('r', rFloats);
    this.states = storage('qrStates', (qrJobs.length * MATRIX_STATE_BYTES) / 4);
    this.cores = storage('cores', coreFloats);
    this.hostU = storage('hostU', hostU);
    this.hostS = storage('hostS', hostS);
    this.hostV = storage('hostV', hostV);
    const liftU = storage('liftU', liftFloats);
    const liftV = storage('liftV', liftFloats);

    // The SVD batch: the device cores first, then every direct layer.
    const deviceCores = core === 'device' ? this.factored : [];
    const direct = tensors.flatMap((tensor, index) =>
      factoredOf.has(index) ? [] : [{ index, rows: tensor.shape[0], cols: tensor.shape[1] }],
    );
    const shapes = [
      ...deviceCores.map((f) => ({ rows: f.kx, cols: f.kd })),
      ...direct.map(({ rows, cols }) => ({ rows, cols })),
    ];
    this.svd = shapes.length > 0 ? kernels.svd.createBatch(shapes, SVD_OPTIONS) : null;
    const svdIndex = new Map<number, number>();
    deviceCores.forEach((f, i) => svdIndex.set(f.index, i));
    direct.forEach(({ index }, i) => svdIndex.set(index, deviceCores.length + i));

    // Round 1: QRs, cores, SVD batch. Round 2 (lift): coefficients and U, V.
    const owned = this.#owned;
    const qr: Dispatch | null =
      qrJobs.length > 0 ? kernels.factored.qr(owned, qrJobs, this.#work, r, this.states) : null;
    if (qr !== null) this.#decompose.push(dispatches(qr));
    const liftJobs: LiftJob[] = [];
    const liftProducts: MatmulPlan[] = [];
    this.factored.forEach((f, j) => {
      const [rxOffset, rdOffset] = rOffsets[j]!;
      const tensor = tensors[f.index]!;
      const factor = gradient.factors.get(f.index)!;
      const onDevice = svdIndex.get(f.index);
      const p = core === 'device' ? this.svd!.plan.matrices[onDevice!]! : null;
      // C′ = R′_x · R′_Δᵀ, into the SVD batch's input or the host's read-back buffer.
      this.#decompose.push(
        kernels.matmul.plan(
          { m: f.kx, n: f.kd, k: f.batch, transB: true },
          {
            a: r,
            b: r,
            c: p === null ? this.cores : this.svd!.input,
            offsetA: rxOffset,
            offsetB: rdOffset,
            offsetC: p === null ? f.coreOffset : p.inputOffset,
          },
        ),
      );
      const k = Math.min(f.kx, f.kd);
      liftJobs.push({
        rxOffset,
        rdOffset,
        batch: f.batch,
        kx: f.kx,
        kd: f.kd,
        uOffset: p?.uOffset ?? f.hostU,
        sOffset: p?.sOffset ?? f.hostS,
        vOffset: p?.vOffset ?? f.hostV,
        k,
        xState: f.xState,
        dState: f.dState,
        outOffset: liftOffsets[j]!,
        cutoffRatio: relativeCutoff(tensor.shape[0], tensor.shape[1]),
      });
      const [rows, cols] = tensor.shape;
      const liftedU = storage(`liftedU[${f.index}]`, k * rows);
      const liftedV = storage(`liftedV[${f.index}]`, k * cols);
      // U (k × rows, atom-major) = M_uᵀ (k × B) · X (B × rows); V likewise from Δ.
      liftProducts.push(
        kernels.matmul.plan(
          { m: k, n: rows, k: f.batch },
          { a: liftU, b: factor.a.buffer, c: liftedU, offsetA: liftOffsets[j]!, offsetB: factor.a.offset },
        ),
        kernels.matmul.plan(
          { m: k, n: cols, k: f.batch },
          { a: liftV, b: factor.d.buffer, c: liftedV, offsetA: liftOffsets[j]!, offsetB: factor.d.offset },
        ),
      );
      this.#lifted.set(f.index, { u: { buffer: liftedU, offset: 0 }, v: { buffer: liftedV, offset: 0 } });
    });
    if (liftJobs.length > 0) {
      const coreBuffers =
        core === 'device'
          ? { coreU: this.svd!.u, coreS: this.svd!.singularValues, coreV: this.svd!.v }
          : { coreU: this.hostU, coreS: this.hostS, coreV: this.hostV };
      this.#lift.push(
        dispatches(
          kernels.factored.lift(owned, liftJobs, { r, ...coreBuffers, states: this.states, outU: liftU, outV: liftV }),
        ),
        ...liftProducts,
      );
    }
    // Direct layers: their gradient into the SVD batch.
    for (const { index } of direct) {
      const tensor = tensors[index]!;
      const p = this.svd!.plan.matrices[svdIndex.get(index)!]!;
      this.#directCopies.push({
        from: { buffer: gradient.buffer, offset: tensor.offset },
        to: p.inputOffset,
        floats: tensor.shape[0] * tensor.shape[1],
      });
    }

    tensors.forEach((tensor, index) => {
      const [rows, cols] = tensor.shape;
      const f = factoredOf.get(index) ?? null;
      const position = svdIndex.get(index);
      const p = position === undefined ? null : this.svd!.plan.matrices[position]!;
      const k = f === null ? p!.k : Math.min(f.kx, f.kd);
      const lifted = this.#lifted.get(index);
      const u = f === null ? { buffer: this.svd!.u, offset: p!.uOffset } : lifted!.u;
      const v = f === null ? { buffer: this.svd!.v, offset: p!.vOffset } : lifted!.v;
      const job = kernels.bernoulli.createJob(k);
      const packedU = storage(`packedU[${index}]`, k * rows);
      const packedV = storage(`packedV[${index}]`, k * cols);
      const gather = dispatches(
        kernels.compact.planGatherRows(owned, job.compaction, u, packedU, rows, k),
        kernels.compact.planGatherRows(owned, job.compaction, v, packedV, cols, k),
      );
      this.layers.push({
        rows,
        cols,
        k,
        sOffset: p?.sOffset ?? -1,
        factored: f,
        probabilities: storage(`probabilities[${index}]`, k),
        job,
        packedU,
        packedV,
        gather,
        u,
        v,
      });
    });
  }

  /** Records round 1: the factor copies and QRs, the cores, and the SVD batch. */
  encodeDecompose(encoder: GPUCommandEncoder): void {
    for (const copy of this.#copies)
      encoder.copyBufferToBuffer(copy.from.buffer, copy.from.offset * 4, this.#work, copy.to * 4, copy.floats * 4);
    for (const copy of this.#directCopies)
      encoder.copyBufferToBuffer(copy.from.buffer, copy.from.offset * 4, this.svd!.input, copy.to * 4, copy.floats * 4);
    if (this.#decompose.length > 0) {
      const pass = encoder.beginComputePass({ label: 'Spectral.factored.pass' });
      for (const step of this.#decompose) step.record(pass);
      pass.end();
    }
    this.svd?.encode(encoder);
  }

  /**
   * Records the lift of the factored layers' vectors (once σ is known, and on the host route once the host has written
   * its core SVDs).
   */
  encodeLift(encoder: GPUCommandEncoder): void {
    if (this.#lift.length === 0) return;
    const pass = encoder.beginComputePass({ label: 'Spectral.lift.pass' });
    for (const step of this.#lift) step.record(pass);
    pass.end();
  }

  /** The device the plan's buffers live on. */
  get device(): GPUDevice {
    return this.#device;
  }

  /** Frees the plan's buffers (after its last submitted work). */
  destroy(): void {
    this.svd?.destroy();
    for (const layer of this.layers) layer.job.destroy();
    for (const buffer of this.#owned) buffer.destroy();
  }
}

/**
 * σ at or below this fraction of σ₀ is float32 rounding noise, not an atom:
 * max(rows, cols)·ε of G's shape (the CPU reference's rule at f32's ε).
 */
export function relativeCutoff(rows: number, cols: number): number {
  return Math.max(rows, cols) * F32_EPSILON;
}
