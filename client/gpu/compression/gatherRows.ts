/** Host wrapper for shaders/gather_rows.wgsl: the rows of the kept atoms, packed, for one read-back. */
import gatherRowsWgsl from '../../../shaders/gather_rows.wgsl?raw';
import type { Compaction } from '../compact';
import type { Dispatch } from '../training/layerKernels';
import type { BufferSlice } from '../training/gpuBackend';

/** The gather pipeline of one device. */
export class GatherRowsKernel {
  static readonly #cache = new WeakMap<GPUDevice, GatherRowsKernel>();
  readonly #device: GPUDevice;
  readonly #pipeline: GPUComputePipeline;

  /** The kernel of `device`, compiled on first use. */
  static forDevice(device: GPUDevice): GatherRowsKernel {
    let kernel = GatherRowsKernel.#cache.get(device);
    if (kernel === undefined) {
      kernel = new GatherRowsKernel(device);
      GatherRowsKernel.#cache.set(device, kernel);
    }
    return kernel;
  }

  private constructor(device: GPUDevice) {
    this.#device = device;
    this.#pipeline = device.createComputePipeline({
      label: 'GatherRows.pipeline',
      layout: 'auto',
      compute: { module: device.createShaderModule({ label: 'GatherRows.module', code: gatherRowsWgsl }), entryPoint: 'main' },
    });
  }

  /**
   * dst[j·rowLength …] = row indices[j] of `src`, for the kept atoms of
   * `compaction` (at most `capacity` rows). The uniform goes into `owned`.
   */
  plan(owned: GPUBuffer[], compaction: Compaction, src: BufferSlice, dst: GPUBuffer, rowLength: number, capacity: number): Dispatch {
    const params = this.#device.createBuffer({ label: 'GatherRows.params', size: 16, usage: GPUBufferUsage.UNIFORM, mappedAtCreation: true });
    new Uint32Array(params.getMappedRange()).set([rowLength, src.offset, capacity, 0]);
    params.unmap();
    owned.push(params);
    const bindGroup = this.#device.createBindGroup({
      label: 'GatherRows.bindGroup',
      layout: this.#pipeline.getBindGroupLayout(0),
      entries: [params, compaction.summary, compaction.indices, src.buffer, dst].map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
    const groups = Math.max(1, Math.ceil((capacity * rowLength) / 256));
    const x = Math.min(groups, this.#device.limits.maxComputeWorkgroupsPerDimension);
    return { pipeline: this.#pipeline, bindGroup, groups: [x, Math.ceil(groups / x), 1] };
  }
}
