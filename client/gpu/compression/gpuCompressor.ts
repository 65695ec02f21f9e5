/**
 * The GPU compressor of the worker round (core/training/compression.ts's
 * DeviceCompressor): spectral ATOMO (spectral.ts), entry-wise ATOMO
 * (entry.ts), QSGD and TernGrad (quantize.ts) on a gradient that never left
 * the device. Other schemes (none), QSGD above 127 levels and layers of 2²⁴
 * entries or more (atomo-entry) fall back to the CPU path.
 *
 * Spectral ATOMO takes the CPU path by default too: the backend then reads
 * back the gradient with each dense layer's factors X, Δ (B·(rows + cols)
 * floats), and the factored SVD (core/linalg/factoredSvd.ts: two thin QRs
 * and a B×B core) costs a few ms, where the batched Jacobi SVD on the device
 * runs one workgroup per matrix: on SwiftShader in Node (MLP, batch 32) the
 * device route compressed in 555–615 ms, the host route in 3.6–30 ms, with
 * the same bytes (docs/benchmarks.md). `spectral: 'device'` keeps the
 * device route, for adapters where it measures faster.
 */
import type { Compression } from '../../../core/atomo';
import type { CompressedLayerStats, DeviceCompressor } from '../../../core/training/compression';
import type { GpuGradient, GpuTrainingBackend } from '../training/gpuBackend';
import { GPU_MAX_ENTRY_LAYER, GpuEntryCompressor } from './entryCompressor';
import { GPU_MAX_QSGD_LEVELS, GpuQuantizer } from './quantizer';
import { GpuSpectralCompressor } from './spectralCompressor';
import type { GradientTensor } from './tensors';
import type { StreamId } from '../../../core/rng';

/** A DeviceCompressor with the buffers it holds. */
export interface GpuCompressor extends DeviceCompressor<GpuGradient> {
  destroy(): void;
}

/** Where spectral ATOMO runs: on the device (batched Jacobi SVD), or on the host from the read-back factors. */
export type SpectralRoute = 'device' | 'host';

/** Options of the GPU compressor. */
export interface GpuCompressorOptions {
  /** Spectral ATOMO's route ('host' by default: see the module comment). */
  readonly spectral?: SpectralRoute;
}

/** The GPU compressor for a GPU backend's model (tensors as in its layout). */
export function createGpuCompressor(backend: Pick<GpuTrainingBackend, 'device' | 'layout'>, options: GpuCompressorOptions = {}): GpuCompressor {
  return createTensorCompressor(backend.device, backend.layout.tensors, options);
}

/** The GPU compressor for any list of tensors of a flat gradient buffer (tests use small ones). */
export function createTensorCompressor(device: GPUDevice, tensors: readonly GradientTensor[], options: GpuCompressorOptions = {}): GpuCompressor {
  const spectralRoute = options.spectral ?? 'host';
  let spectral: GpuSpectralCompressor | null = null;
  let entry: GpuEntryCompressor | null = null;
  const quantizers = new Map<'qsgd' | 'terngrad', GpuQuantizer>();
  const quantizer = (scheme: 'qsgd' | 'terngrad'): GpuQuantizer => {
    let q = quantizers.get(scheme);
    if (q === undefined) {
      q = new GpuQuantizer(device, scheme);
      quantizers.set(scheme, q);
    }
    return q;
  };
  return {
    supports(compression: Compression): boolean {
      switch (compression.scheme) {
        case 'atomo-svd':
          return spectralRoute === 'device';
        case 'terngrad':
          return true;
        case 'atomo-entry':
          return compression.budget > 0 && tensors.every((t) => t.shape[0] * t.shape[1] < GPU_MAX_ENTRY_LAYER);
        case 'qsgd':
          return (
            (compression.bucketSize ?? 0) === 0 && Number.isInteger(compression.levels) && compression.levels >= 1 && compression.levels <= GPU_MAX_QSGD_LEVELS
          );
        default:
          return false;
      }
    },
    compress(gradient: GpuGradient, compression: Compression, stream: (layer: number) => StreamId): Promise<{ loss: number; layers: CompressedLayerStats[] }> {
      switch (compression.scheme) {
        case 'atomo-svd':
          spectral ??= new GpuSpectralCompressor(device);
          return spectral.compress({ tensors, gradient, stream }, compression.budget);
        case 'atomo-entry':
          entry ??= new GpuEntryCompressor(device);
          return entry.compress({ tensors, gradient, stream }, compression.budget);
        case 'qsgd':
        case 'terngrad':
          return quantizer(compression.scheme).compress({ tensors, gradient, stream }, compression.levels);
        default:
          return Promise.reject(new Error(`GPU compression does not handle ${compression.scheme}`));
      }
    },
    destroy() {
      spectral?.destroy();
      entry?.destroy();
      for (const q of quantizers.values()) q.destroy();
    },
  };
}
