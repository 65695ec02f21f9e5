/** Host wrapper for shaders/axpy.wgsl: y ← a·x + y on GPU buffers. */
import axpyWgsl from '../../shaders/axpy.wgsl?raw';

const WORKGROUP_SIZE = 256;
const MAX_GROUPS_PER_DIM = 65535;

export class AxpyKernel {
  readonly #device: GPUDevice;
  readonly #pipeline: GPUComputePipeline;
  readonly #params: GPUBuffer;

  constructor(device: GPUDevice) {
    this.#device = device;
    const module = device.createShaderModule({ label: 'Axpy.module', code: axpyWgsl });
    this.#pipeline = device.createComputePipeline({
      label: 'Axpy.pipeline',
      layout: 'auto',
      compute: { module, entryPoint: 'main' },
    });
    this.#params = device.createBuffer({
      label: 'Axpy.params',
      size: 2 * 4, // n: u32, a: f32
      usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
    });
  }

  /** Records y ← a·x + y for the first n floats of x and y. */
  encode(encoder: GPUCommandEncoder, a: number, x: GPUBuffer, y: GPUBuffer, n: number): void {
    const params = new ArrayBuffer(8);
    new Uint32Array(params, 0, 1)[0] = n;
    new Float32Array(params, 4, 1)[0] = a;
    this.#device.queue.writeBuffer(this.#params, 0, params);
    const bindGroup = this.#device.createBindGroup({
      label: 'Axpy.bindGroup',
      layout: this.#pipeline.getBindGroupLayout(0),
      entries: [
        { binding: 0, resource: { buffer: this.#params } },
        { binding: 1, resource: { buffer: x } },
        { binding: 2, resource: { buffer: y } },
      ],
    });
    const groups = Math.ceil(n / WORKGROUP_SIZE);
    const groupsX = Math.min(groups, MAX_GROUPS_PER_DIM);
    const groupsY = Math.ceil(groups / groupsX);
    const pass = encoder.beginComputePass({ label: 'Axpy.pass' });
    pass.setPipeline(this.#pipeline);
    pass.setBindGroup(0, bindGroup);
    if (groups > 0) pass.dispatchWorkgroups(groupsX, groupsY);
    pass.end();
  }

  destroy(): void {
    this.#params.destroy();
  }
}
