/**
 * Host of shaders/factored/, the device half of the factored spectral route
 * (docs/design.md, "Decompositions" and "GPU routes"):
 *   qr.wgsl    R′ of the thin QR of each factor (Householder, power-of-two
 *              scaled), many factors of different shapes in one dispatch;
 *   lift.wgsl  the coefficients M_uᵀ, M_vᵀ that turn the core's singular
 *              vectors into the gradient's with one product per side,
 *              U = Xᵀ·M_u, V = Δᵀ·M_v (client/gpu/kernels/matmul.ts).
 * The core R′_x R′_Δᵀ between them is a matmul, and its SVD runs on the
 * device (kernels/svd.ts) or on the host (compression/spectralCompressor.ts).
 */
import qrWgsl from '../../../shaders/factored/qr.wgsl?raw';
import liftWgsl from '../../../shaders/factored/lift.wgsl?raw';
import { dispatchOf, jobTable, type Dispatch } from '../runtime/dispatch';
import { kernelFamily, type Kernel } from '../runtime/pipelines';
import { withJobs, withScaling, withStructs } from './common';

/** Bytes of one MatrixState record (shaders/common/structs.wgsl): 8 × 4. */
export const MATRIX_STATE_BYTES = 8 * 4;
/** Word of MatrixState holding scaleExp (i32): the factor is F′·2^scaleExp. */
export const SCALE_EXP_WORD = 0;

/**
 * One factor's QR: F (length × batch, column-major) at workOffset in `work`, R′ (min(length, batch) × batch,
 * row-major) at rOffset in `r`.
 */
export interface QrJob {
  readonly workOffset: number;
  readonly length: number;
  readonly batch: number;
  readonly rOffset: number;
  /** Index of its MatrixState. */
  readonly state: number;
}

/** One factored layer's lift coefficients (offsets in floats; see shaders/factored/lift.wgsl). */
export interface LiftJob {
  readonly rxOffset: number;
  readonly rdOffset: number;
  readonly batch: number;
  readonly kx: number;
  readonly kd: number;
  readonly uOffset: number;
  readonly sOffset: number;
  readonly vOffset: number;
  readonly k: number;
  readonly xState: number;
  readonly dState: number;
  readonly outOffset: number;
  /** σ′ₜ ≤ cutoffRatio·σ′₀ gets zero coefficients. */
  readonly cutoffRatio: number;
}

/** The buffers of a lift dispatch, in binding order after the job table. */
export interface LiftBuffers {
  readonly r: GPUBuffer;
  readonly coreU: GPUBuffer;
  readonly coreS: GPUBuffer;
  readonly coreV: GPUBuffer;
  readonly states: GPUBuffer;
  readonly outU: GPUBuffer;
  readonly outV: GPUBuffer;
}

/** The factored-route kernels of one device. */
export class FactoredKernels {
  readonly #device: GPUDevice;
  readonly #kernels: Readonly<Record<'qr' | 'lift', Kernel>>;

  constructor(device: GPUDevice) {
    this.#device = device;
    this.#kernels = kernelFamily(device, 'Factored', {
      qr: { code: withJobs(withScaling(qrWgsl)) },
      lift: { code: withJobs(withStructs(liftWgsl)) },
    });
  }

  /** The QR of every job, one workgroup each; the job table goes into `owned`. */
  qr(owned: GPUBuffer[], jobs: readonly QrJob[], work: GPUBuffer, r: GPUBuffer, states: GPUBuffer): Dispatch {
    const words = jobs.map((j) => [j.workOffset, j.length, j.batch, j.rOffset, j.state]);
    const table = jobTable(this.#device, 'Factored.qr.jobs', words, false, owned);
    return dispatchOf(this.#device, this.#kernels.qr, 'Factored.qr', [table, work, r, states], [jobs.length, 1, 1]);
  }

  /** The lift coefficients of every job, one workgroup each; the job table goes into `owned`. */
  lift(owned: GPUBuffer[], jobs: readonly LiftJob[], buffers: LiftBuffers): Dispatch {
    const words = jobs.map((j) => [
      j.rxOffset,
      j.rdOffset,
      j.batch,
      j.kx,
      j.kd,
      j.uOffset,
      j.sOffset,
      j.vOffset,
      j.k,
      j.xState,
      j.dState,
      j.outOffset,
      j.cutoffRatio,
    ]);
    const table = jobTable(this.#device, 'Factored.lift.jobs', words, true, owned);
    const { r, coreU, coreS, coreV, states, outU, outV } = buffers;
    return dispatchOf(
      this.#device,
      this.#kernels.lift,
      'Factored.lift',
      [table, r, coreU, coreS, coreV, states, outU, outV],
      [jobs.length, 1, 1],
    );
  }
}
