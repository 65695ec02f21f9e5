/**
 * A byte budget on the GPU (docs/design.md, "Budgets by bytes" and "GPU
 * routes"): atomo-auto, and atomo-svd or atomo-dct with a byte budget, on a
 * gradient that is on the device. Which parts run where:
 *  - on the device: the 2-D DCT of every layer (kernels/dct.ts through
 *    dctCompressor.ts) and the SVD of every layer (spectralCompressor.ts:
 *    the factored route for a dense weight with its factors, the direct
 *    one otherwise), the transforms that cost the CPU path most;
 *  - read back: the gradient (the entry-wise curve needs every entry's
 *    magnitude in atom order, and the realised error is measured against
 *    it), the DCT coefficients, each layer's σ, U and V, and the losses;
 *  - on the host: everything else, by core's own code on those numbers
 *    (compressOnCpu with the decompositions given): the variance curves,
 *    the split of the budget across layers and decompositions
 *    (core/atomo/byteBudget.ts), the draw at each layer's water level τ
 *    (sampleAtomsAtLevel, from the layer's Philox stream) and the
 *    statistics. The host's split and draw are thus the CPU path's; the
 *    samples equal the CPU path's wherever the float32 device transforms
 *    give the same coefficients to the rounding that decides a draw, and
 *    the plan's choices agree wherever the candidates' variances are not
 *    within float32 rounding of each other (byteBudgetCompressor.gpu.test.ts).
 * atomo-entry with a byte budget has no transform to save and stays on the
 * CPU path (gpuCompressor.ts).
 */
import type { ByteBudgetScheme } from '../../../core/atomo/compressByBytes';
import { dctAtoms } from '../../../core/atomo/decompositions/dct';
import { spectralAtoms } from '../../../core/atomo/decompositions/spectralAtoms';
import type { Compression } from '../../../core/atomo';
import { compressOnCpu, type LayerGradient } from '../../../core/training/compression';
import { StagingPool } from '../runtime/pools';
import type { GpuDctCompressor } from './dctCompressor';
import type { GpuSpectralCompressor, SpectralCore } from './spectralCompressor';
import { relativeCutoff } from './spectralPlan';
import { meanLossOf, type CompressedGradient, type DeviceGradient } from './tensors';

/** The schemes whose byte budget this route handles: those with a transform to run on the device. */
export function onDeviceByBytes(scheme: Compression['scheme']): scheme is ByteBudgetScheme {
  return scheme === 'atomo-auto' || scheme === 'atomo-svd' || scheme === 'atomo-dct';
}

/** Byte-budget compression of a gradient on the GPU, transforms on the device and the split on the host. */
export class GpuByteBudgetCompressor {
  readonly #device: GPUDevice;
  readonly #dct: () => GpuDctCompressor;
  readonly #spectral: () => GpuSpectralCompressor;
  readonly #core: SpectralCore | undefined;
  readonly #staging: StagingPool;

  /**
   * `dct` and `spectral` give the compressors to share (made on first use); `core` fixes the spectral core SVD's side
   * (else the adapter's measured one).
   */
  constructor(
    device: GPUDevice,
    dct: () => GpuDctCompressor,
    spectral: () => GpuSpectralCompressor,
    core?: SpectralCore,
  ) {
    this.#device = device;
    this.#dct = dct;
    this.#spectral = spectral;
    this.#core = core;
    this.#staging = new StagingPool(device, 'ByteBudget.staging');
  }

  /**
   * Compresses every tensor of the gradient so that their expected bytes add up to compression.byteBudget; layer l
   * draws from stream(l).
   */
  async compress({ tensors, gradient, stream }: DeviceGradient, compression: Compression): Promise<CompressedGradient> {
    const scheme = compression.scheme;
    if (compression.byteBudget === undefined || !onDeviceByBytes(scheme)) {
      const why = compression.byteBudget === undefined ? 'without a byte budget' : 'is not a device route';
      throw new Error(`GPU byte budget: ${scheme} ${why}`);
    }
    const withDct = scheme !== 'atomo-svd';
    const withSpectral = scheme !== 'atomo-dct';
    // The DCT first (one submit), then the read of the gradient, its losses and the coefficients, mapped after the
    // SVDs.
    const coefficients = withDct ? this.#dct().transform(tensors, gradient) : null;
    const encoder = this.#device.createCommandEncoder({ label: 'ByteBudget.read' });
    const gradientRead = this.#staging.encodeRead(
      encoder,
      gradient.buffer,
      0,
      (gradient.lossOffset + gradient.batch) * 4,
    );
    const coefficientRead =
      coefficients === null ? null : this.#staging.encodeRead(encoder, coefficients.buffer, 0, gradient.lossOffset * 4);
    this.#device.queue.submit([encoder.finish()]);
    const spectral = withSpectral ? this.#spectral() : null;
    const triplets =
      spectral === null
        ? null
        : await spectral.readDecomposition(await spectral.decompose(tensors, gradient, this.#core));
    const [gradientBytes, coefficientBytes] = await Promise.all([gradientRead.map(), coefficientRead?.map()]);
    const values = new Float32Array(gradientBytes);
    const transformed = coefficientBytes === undefined ? null : new Float32Array(coefficientBytes);

    const layers: LayerGradient[] = tensors.map(({ offset, shape }, layer) => {
      const size = shape[0] * shape[1];
      const dct =
        transformed === null
          ? undefined
          : dctAtoms(Float64Array.from(transformed.subarray(offset, offset + size)), shape);
      const found = triplets?.[layer];
      let spectralAtomsOf;
      if (found !== undefined) {
        // σ below max(rows, cols)·ε·σ₀ is rounding noise, not an atom (the device spectral route's rule,
        // spectralPlan.ts).
        const cutoff = relativeCutoff(shape[0], shape[1]) * (found.sigma[0] ?? 0);
        let rank = 0;
        while (rank < found.k && found.sigma[rank]! > cutoff) rank++;
        spectralAtomsOf = spectralAtoms(shape, found.sigma.slice(0, rank), found.u, found.v);
      }
      const decompositions = {
        ...(dct === undefined ? {} : { dct }),
        ...(spectralAtomsOf === undefined ? {} : { spectral: spectralAtomsOf }),
      };
      return { layer, shape, values: values.subarray(offset, offset + size), decompositions };
    });
    const lossBytes = gradientBytes.slice(gradient.lossOffset * 4);
    return { loss: meanLossOf(lossBytes, gradient), layers: compressOnCpu(layers, compression, stream) };
  }

  /** Frees the staging buffers (the shared compressors are their owner's). */
  destroy(): void {
    this.#staging.destroy();
  }
}
