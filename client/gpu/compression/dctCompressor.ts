/**
 * Fourier ATOMO on the GPU (docs/design.md, "Decompositions"): the 2-D DCT-II
 * of every layer on the device (kernels/dct.ts, into a buffer laid out like
 * the gradient, the losses copied after it), then entry-wise ATOMO on the
 * coefficients (entryCompressor.ts: water-filling, Bernoulli, compaction,
 * realised error, all on the device). The atoms d_k d_lᵀ are orthonormal,
 * so ‖ĝ − g‖ and ‖g‖ measured on the coefficients are those of the gradient
 * (Parseval), and coefficient i = k·cols + l draws from the same stream
 * address as on the CPU (core/atomo/schemes/atomo-dct.ts).
 */
import type { DctSample } from '../../../core/atomo/types';
import { DctKernel, type DctPlan } from '../kernels/dct';
import type { MatmulKernel } from '../kernels/matmul';
import type { GpuGradient } from '../training/gpuBackend';
import { GpuEntryCompressor } from './entryCompressor';
import {
  gradientPlanCache,
  tensorsKey,
  type CompressedGradient,
  type DeviceGradient,
  type GradientTensor,
} from './tensors';

interface Plan {
  readonly coefficients: GPUBuffer;
  readonly scratch: GPUBuffer;
  readonly transforms: DctPlan[];
  destroy(): void;
}

/** Fourier ATOMO of a gradient on the GPU, for any set of tensors. */
export class GpuDctCompressor {
  readonly #device: GPUDevice;
  readonly #dct: DctKernel;
  readonly #entry: GpuEntryCompressor;
  readonly #plans = gradientPlanCache<Plan>();

  constructor(device: GPUDevice, matmul: MatmulKernel) {
    this.#device = device;
    this.#dct = new DctKernel(device, matmul);
    this.#entry = new GpuEntryCompressor(device);
  }

  #plan(tensors: readonly GradientTensor[], gradient: GpuGradient): Plan {
    const key = `${this.#plans.id(gradient.buffer)}|${gradient.batch}|${tensorsKey(tensors)}`;
    return this.#plans.get(key, () => {
      const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
      const coefficients = this.#device.createBuffer({
        label: 'Dct.coefficients',
        size: Math.max(16, gradient.buffer.size),
        usage,
      });
      const largest = Math.max(...tensors.map((t) => t.shape[0] * t.shape[1]));
      const scratch = this.#device.createBuffer({
        label: 'Dct.scratch',
        size: Math.max(16, largest * 4),
        usage: GPUBufferUsage.STORAGE,
      });
      const transforms = tensors.map((t) =>
        this.#dct.plan(
          t.shape[0],
          t.shape[1],
          { buffer: gradient.buffer, offset: t.offset },
          { buffer: coefficients, offset: t.offset },
          { buffer: scratch, offset: 0 },
        ),
      );
      const destroy = () => {
        coefficients.destroy();
        scratch.destroy();
      };
      return { coefficients, scratch, transforms, destroy };
    });
  }

  /**
   * Submits the 2-D DCT of every tensor: the coefficients land in a buffer
   * laid out like the gradient (tensor at its offset, losses copied after),
   * returned as a gradient on that buffer. Valid until the next transform.
   */
  transform(tensors: readonly GradientTensor[], gradient: GpuGradient): GpuGradient {
    const plan = this.#plan(tensors, gradient);
    const encoder = this.#device.createCommandEncoder({ label: 'Dct.transform' });
    // One pass per layer: the layers share the scratch buffer, and passes run in order.
    for (const transform of plan.transforms) {
      const pass = encoder.beginComputePass({ label: 'Dct.transform.pass' });
      transform.record(pass);
      pass.end();
    }
    encoder.copyBufferToBuffer(
      gradient.buffer,
      gradient.lossOffset * 4,
      plan.coefficients,
      gradient.lossOffset * 4,
      gradient.batch * 4,
    );
    this.#device.queue.submit([encoder.finish()]);
    return { ...gradient, buffer: plan.coefficients };
  }

  /** Transforms every tensor, then compresses the coefficients with budget s (expected coefficients sent per layer). */
  async compress({ tensors, gradient, stream }: DeviceGradient, budget: number): Promise<CompressedGradient> {
    const onCoefficients = this.transform(tensors, gradient);
    const { loss, layers } = await this.#entry.compress({ tensors, gradient: onCoefficients, stream }, budget);
    return {
      loss,
      layers: layers.map((layer) => {
        if (layer.sample.scheme !== 'atomo-entry')
          throw new Error(`GPU atomo-dct: the entry-wise compressor returned ${layer.sample.scheme}`);
        const sample: DctSample = {
          scheme: 'atomo-dct',
          shape: layer.sample.shape,
          indices: layer.sample.indices,
          values: layer.sample.values,
        };
        return { ...layer, sample };
      }),
    };
  }

  /** Frees the plans, the bases and the entry-wise compressor's buffers. */
  destroy(): void {
    this.#plans.destroyAll();
    this.#dct.destroy();
    this.#entry.destroy();
  }
}
