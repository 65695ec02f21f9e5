/**
 * Host of shaders/entry/, the two kernels of entry-wise ATOMO that are not
 * sampling (client/gpu/compression/entryCompressor.ts puts them together
 * with the Bernoulli draw and the compaction):
 *   waterfill.wgsl       the water level τ and pᵢ = min(1, |gᵢ|/τ) of one
 *                        layer, with Σ p, the closed-form variance and ‖g‖²;
 *   realised_error.wgsl  ‖ĝ − g‖² of the draw, from the keep mask;
 *   chunked_sum.wgsl     what both share (the stats layout, the chunked sum),
 *                        put in front of each (WGSL has no include).
 * One workgroup per layer for both.
 */
import waterfillWgsl from '../../../shaders/entry/waterfill.wgsl?raw';
import realisedErrorWgsl from '../../../shaders/entry/realised_error.wgsl?raw';
import chunkedSumWgsl from '../../../shaders/entry/chunked_sum.wgsl?raw';
import { dispatchOf, type Dispatch } from '../runtime/dispatch';
import { isSoftwareAdapter } from '../runtime/adapter';
import { PipelineCache, type Kernel } from '../runtime/pipelines';
import { concatWgsl } from './common';

/** Options of the entry-wise kernels. */
export interface EntryKernelOptions {
  /** Invocations per workgroup (the shaders' WORKGROUP_SIZE): tests run both sizes on one device. */
  readonly workgroupSize?: 64 | 256;
}

/** The entry-wise ATOMO kernels of one device. */
export class EntryKernels {
  readonly #device: GPUDevice;
  readonly #waterfill: Kernel;
  readonly #realised: Kernel;

  /**
   * SwiftShader runs a barrier as a switch of every 4-invocation group: 64
   * invocations make the search's ~60 barriers per layer 4× cheaper there
   * (7 → 2 ms for the test MLP); a GPU gets the shaders' default, 256.
   */
  constructor(device: GPUDevice, options: EntryKernelOptions = {}) {
    this.#device = device;
    const size = options.workgroupSize ?? (isSoftwareAdapter(device) ? 64 : undefined);
    const constants = size === undefined ? {} : { constants: { WORKGROUP_SIZE: size } };
    const cache = PipelineCache.for(device);
    this.#waterfill = cache.kernel({
      label: 'Entry.waterfill',
      code: concatWgsl(chunkedSumWgsl, waterfillWgsl),
      ...constants,
    });
    this.#realised = cache.kernel({
      label: 'Entry.realisedError',
      code: concatWgsl(chunkedSumWgsl, realisedErrorWgsl),
      ...constants,
    });
  }

  /** The water-filling of one layer: buffers params, gradient, probabilities, stats (waterfill.wgsl's bindings). */
  waterfill(label: string, buffers: readonly [GPUBuffer, GPUBuffer, GPUBuffer, GPUBuffer]): Dispatch {
    return dispatchOf(this.#device, this.#waterfill, `Entry.waterfill[${label}]`, buffers, [1, 1, 1]);
  }

  /** The realised error of one layer's draw: buffers params, gradient, probabilities, keep mask, stats. */
  realisedError(label: string, buffers: readonly [GPUBuffer, GPUBuffer, GPUBuffer, GPUBuffer, GPUBuffer]): Dispatch {
    return dispatchOf(this.#device, this.#realised, `Entry.realisedError[${label}]`, buffers, [1, 1, 1]);
  }
}
