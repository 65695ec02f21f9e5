/** Host of shaders/axpy.wgsl: y ← a·x + y on GPU buffers (CPU reference: core/linalg/axpy.ts). */
import axpyWgsl from '../../../shaders/axpy.wgsl?raw';
import { dispatchOf, encodePass, gridForItems, uniformBuffer } from '../runtime/dispatch';
import { PipelineCache, type Kernel } from '../runtime/pipelines';
import { withElements } from './common';

/** The axpy kernel of one device. */
export class AxpyKernel {
  readonly #device: GPUDevice;
  readonly #kernel: Kernel;
  /** One uniform per encode, so several encodes can share a submit. */
  readonly #uniforms: GPUBuffer[] = [];

  constructor(device: GPUDevice) {
    this.#device = device;
    this.#kernel = PipelineCache.for(device).kernel({ label: 'Axpy', code: withElements(axpyWgsl) });
  }

  /** Records y ← a·x + y for the first n floats of x and y. */
  encode(encoder: GPUCommandEncoder, a: number, x: GPUBuffer, y: GPUBuffer, n: number): void {
    const params = new ArrayBuffer(8); // count: u32, a: f32
    new Uint32Array(params, 0, 1)[0] = n;
    new Float32Array(params, 4, 1)[0] = a;
    const uniform = uniformBuffer(this.#device, 'Axpy.params', params, this.#uniforms);
    encodePass(encoder, 'Axpy.pass', [
      dispatchOf(this.#device, this.#kernel, 'Axpy', [uniform, x, y], gridForItems(this.#device, this.#kernel, n)),
    ]);
  }

  /** Frees the uniforms of every encode so far (after the work is submitted). */
  destroy(): void {
    for (const buffer of this.#uniforms) buffer.destroy();
    this.#uniforms.length = 0;
  }
}
