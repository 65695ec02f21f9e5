/**
 * The GPU compressor of the worker round (core/training/compression.ts's
 * DeviceCompressor): spectral ATOMO (spectralCompressor.ts), entry-wise
 * ATOMO (entryCompressor.ts), Fourier ATOMO (dctCompressor.ts, an option),
 * QSGD and TernGrad (quantiser.ts), and PowerSGD with its error feedback
 * kept on the device (powerSgdCompressor.ts) on a gradient that never left
 * the device; and byte budgets (atomo-auto, atomo-svd and atomo-dct by
 * bytes: byteBudgetCompressor.ts, an option), whose DCT and SVD run on the
 * device and whose split and draw run on the host. Other schemes (none,
 * atomo-auto without a byte budget), atomo-entry by bytes (no transform to
 * save), error feedback on an unbiased scheme, QSGD above 127 levels or in
 * buckets, layers of 2²⁴ entries or more (atomo-entry, atomo-dct), sides of
 * DCT_MAX_SIZE or more (atomo-dct and byte budgets with DCT atoms) and
 * PowerSGD above 256 columns fall back to the CPU path.
 *
 * Spectral ATOMO has two routes. 'device' (spectralCompressor.ts): the
 * factored SVD on the device, thin QRs of X and Δ in WGSL, the B×B core's
 * SVD on the side measured faster for the adapter, U and V by one product
 * each. 'host': the backend reads back the gradient with each dense layer's
 * factors X, Δ (B·(rows + cols) floats) and the CPU scheme takes the
 * factored SVD (core/linalg/factoredSvd.ts). The host route is the
 * default: on SwiftShader (the adapter we can measure) it is the faster,
 * since one workgroup per QR or Jacobi runs on one core there; figures for
 * both in docs/benchmarks.md ("Training round").
 *
 * A byte budget's route is 'host' by default too: the CPU path then takes
 * every decomposition itself (the factored SVD from the read-back factors,
 * the DCT by FFT). On SwiftShader the device's DCT and one-workgroup QRs
 * lose to it: atomo-auto's MLP round takes over twice as long with its
 * transforms on the device (docs/benchmarks.md, "Training round").
 */
import { takesByteBudget } from '../../../core/atomo/types';
import type { Compression } from '../../../core/atomo';
import type { CompressedLayerStats, DeviceCompressor } from '../../../core/training/compression';
import type { GpuGradient, GpuTrainingBackend } from '../training/gpuBackend';
import { DCT_MAX_SIZE } from '../kernels/dct';
import { MatmulKernel } from '../kernels/matmul';
import { GpuByteBudgetCompressor, onDeviceByBytes } from './byteBudgetCompressor';
import { GpuDctCompressor } from './dctCompressor';
import { GPU_MAX_ENTRY_LAYER, GpuEntryCompressor } from './entryCompressor';
import { GpuPowerSgd, gpuPowerSgdFits, type PowerSgdRoute } from './powerSgdCompressor';
import { GPU_MAX_QSGD_LEVELS, GpuQuantiser } from './quantiser';
import { GpuSpectralCompressor, type SpectralCore } from './spectralCompressor';
import type { GradientTensor } from './tensors';
import type { StreamId } from '../../../core/rng';

/** A DeviceCompressor with the buffers it holds. */
export interface GpuCompressor extends DeviceCompressor<GpuGradient> {
  destroy(): void;
}

/** Where spectral ATOMO runs: on the device (the factored route in WGSL), or on the host from the read-back factors. */
export type SpectralRoute = 'device' | 'host';

/** Options of the GPU compressor. */
export interface GpuCompressorOptions {
  /** Spectral ATOMO's route ('host' by default: see the module comment). */
  readonly spectral?: SpectralRoute;
  /** On the device route, where the core SVD runs ('auto': measured per adapter). */
  readonly core?: SpectralCore | 'auto';
  /**
   * Fourier ATOMO on the device (dctCompressor.ts) or on the CPU path ('host' by default: slower on SwiftShader,
   * docs/benchmarks.md).
   */
  readonly dct?: 'device' | 'host';
  /**
   * Where PowerSGD orthonormalises P ('host' by default: faster on SwiftShader, powerSgdCompressor.ts PowerSgdRoute).
   */
  readonly powerSgd?: PowerSgdRoute;
  /**
   * A byte budget (atomo-auto, atomo-svd, atomo-dct) with its transforms on the device, or on the CPU path ('host' by
   * default: see the module comment).
   */
  readonly byteBudget?: 'device' | 'host';
}

/** The GPU compressor for a GPU backend's model (tensors as in its layout). */
export function createGpuCompressor(
  backend: Pick<GpuTrainingBackend, 'device' | 'layout'>,
  options: GpuCompressorOptions = {},
): GpuCompressor {
  return createTensorCompressor(backend.device, backend.layout.tensors, options);
}

/** The GPU compressor for any list of tensors of a flat gradient buffer (tests use small ones). */
export function createTensorCompressor(
  device: GPUDevice,
  tensors: readonly GradientTensor[],
  options: GpuCompressorOptions = {},
): GpuCompressor {
  const spectralRoute = options.spectral ?? 'host';
  const dctRoute = options.dct ?? 'host';
  const byteBudgetRoute = options.byteBudget ?? 'host';
  let spectral: GpuSpectralCompressor | null = null;
  let entry: GpuEntryCompressor | null = null;
  let dct: GpuDctCompressor | null = null;
  let matmul: MatmulKernel | null = null;
  let powerSgd: GpuPowerSgd | null = null;
  let byBytes: GpuByteBudgetCompressor | null = null;
  const quantisers = new Map<'qsgd' | 'terngrad', GpuQuantiser>();
  const quantiser = (scheme: 'qsgd' | 'terngrad'): GpuQuantiser => {
    let q = quantisers.get(scheme);
    if (q === undefined) {
      q = new GpuQuantiser(device, scheme);
      quantisers.set(scheme, q);
    }
    return q;
  };
  const spectralCompressor = (): GpuSpectralCompressor =>
    (spectral ??= new GpuSpectralCompressor(device, options.core === undefined ? {} : { core: options.core }));
  const dctCompressor = (): GpuDctCompressor => {
    matmul ??= new MatmulKernel(device);
    return (dct ??= new GpuDctCompressor(device, matmul));
  };
  const dctFits = () =>
    tensors.every((t) => t.shape[0] * t.shape[1] < GPU_MAX_ENTRY_LAYER && Math.max(...t.shape) < DCT_MAX_SIZE);
  return {
    supports(compression: Compression): boolean {
      // Error feedback on an unbiased scheme keeps its memory on the CPU (core/atomo/errorFeedback.ts).
      if (compression.errorFeedback === true && compression.scheme !== 'powersgd') return false;
      if (compression.byteBudget !== undefined && takesByteBudget(compression.scheme)) {
        return (
          byteBudgetRoute === 'device' &&
          onDeviceByBytes(compression.scheme) &&
          (compression.scheme === 'atomo-svd' || dctFits())
        );
      }
      switch (compression.scheme) {
        case 'powersgd':
          return gpuPowerSgdFits(compression.budget, tensors);
        case 'atomo-svd':
          return spectralRoute === 'device';
        case 'terngrad':
          // The paper's clipping needs σ per layer first: the CPU scheme does it.
          return (compression.terngradClip ?? 0) === 0;
        case 'atomo-entry':
          return compression.budget > 0 && tensors.every((t) => t.shape[0] * t.shape[1] < GPU_MAX_ENTRY_LAYER);
        case 'atomo-dct':
          return dctRoute === 'device' && compression.budget > 0 && dctFits();
        case 'qsgd':
          return (
            (compression.bucketSize ?? 0) === 0 &&
            Number.isInteger(compression.levels) &&
            compression.levels >= 1 &&
            compression.levels <= GPU_MAX_QSGD_LEVELS
          );
        default:
          return false;
      }
    },
    compress(
      gradient: GpuGradient,
      compression: Compression,
      stream: (layer: number) => StreamId,
      memory?: object,
    ): Promise<{ loss: number; layers: CompressedLayerStats[] }> {
      if (compression.byteBudget !== undefined && takesByteBudget(compression.scheme)) {
        const core = options.core === 'auto' ? undefined : options.core;
        byBytes ??= new GpuByteBudgetCompressor(device, dctCompressor, spectralCompressor, core);
        return byBytes.compress({ tensors, gradient, stream }, compression);
      }
      switch (compression.scheme) {
        case 'powersgd':
          matmul ??= new MatmulKernel(device);
          powerSgd ??= new GpuPowerSgd(device, matmul, options.powerSgd);
          return powerSgd.compress({ tensors, gradient, stream }, compression.budget, memory);
        case 'atomo-svd':
          return spectralCompressor().compress({ tensors, gradient, stream }, compression.budget);
        case 'atomo-entry':
          entry ??= new GpuEntryCompressor(device);
          return entry.compress({ tensors, gradient, stream }, compression.budget);
        case 'atomo-dct':
          return dctCompressor().compress({ tensors, gradient, stream }, compression.budget);
        case 'qsgd':
        case 'terngrad':
          return quantiser(compression.scheme).compress(
            { tensors, gradient, stream },
            compression.levels,
            compression.qsgdCoding,
          );
        default:
          return Promise.reject(new Error(`GPU compression does not handle ${compression.scheme}`));
      }
    },
    destroy() {
      byBytes?.destroy();
      spectral?.destroy();
      entry?.destroy();
      dct?.destroy();
      powerSgd?.destroy();
      matmul?.destroy();
      for (const q of quantisers.values()) q.destroy();
    },
  };
}
