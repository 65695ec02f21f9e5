/** Test-only host of philoxProbe.wgsl: Philox outputs and Bernoulli thresholds computed on the GPU. */
import probeWgsl from './philoxProbe.wgsl?raw';
import { withRandomStream } from '../kernels/common';
import { encodePass, gridForItems } from '../runtime/dispatch';
import { kernelFamily, type Kernel } from '../runtime/pipelines';
import { StagingPool } from '../runtime/pools';

/** One Philox input: counter (4 words) and key (2 words). */
export interface PhiloxInput {
  readonly counter: readonly [number, number, number, number];
  readonly key: readonly [number, number];
}

/** Runs the probe entry points on a device. */
export class PhiloxProbe {
  readonly #device: GPUDevice;
  readonly #kernels: Readonly<Record<'philox' | 'threshold' | 'mulWide', Kernel>>;
  readonly #staging: StagingPool;

  /** Takes the three probes (entry points of one module) from the device's pipeline cache. */
  constructor(device: GPUDevice) {
    this.#device = device;
    const code = withRandomStream(probeWgsl);
    this.#kernels = kernelFamily(device, 'PhiloxProbe', {
      philox: { code, entryPoint: 'philox' },
      threshold: { code, entryPoint: 'threshold' },
      mulWide: { code, entryPoint: 'mulWide' },
    });
    this.#staging = new StagingPool(device, 'PhiloxProbe.staging');
  }

  /** philox4x32 of each input; 4 words per input, in order. */
  async philox(inputs: readonly PhiloxInput[]): Promise<Uint32Array> {
    const words = new Uint32Array(inputs.length * 6);
    inputs.forEach(({ counter, key }, i) => words.set([...counter, ...key], 6 * i));
    return this.#run(this.#kernels.philox, 0, words, inputs.length * 4, inputs.length);
  }

  /** philoxMulWide of each pair (a, b): the 64-bit product as (high, low) words. */
  async mulWide(pairs: Uint32Array): Promise<Uint32Array> {
    return this.#run(this.#kernels.mulWide, 0, pairs, pairs.length, pairs.length / 2);
  }

  /** bernoulliThreshold of each f32 value, computed by the WGSL function. */
  async thresholds(p: Float32Array): Promise<Uint32Array> {
    return this.#run(this.#kernels.threshold, 1, p, p.length, p.length);
  }

  /** Runs `kernel` with one invocation per item, `input` at binding `inputBinding` and the output at binding 2. */
  async #run(
    kernel: Kernel,
    inputBinding: number,
    input: Uint32Array | Float32Array,
    outWords: number,
    items: number,
  ): Promise<Uint32Array> {
    const device = this.#device;
    const inputBuffer = device.createBuffer({
      label: 'PhiloxProbe.input',
      size: input.byteLength,
      usage: GPUBufferUsage.STORAGE,
      mappedAtCreation: true,
    });
    new Uint8Array(inputBuffer.getMappedRange()).set(new Uint8Array(input.buffer, input.byteOffset, input.byteLength));
    inputBuffer.unmap();
    const outBuffer = device.createBuffer({
      label: 'PhiloxProbe.out',
      size: outWords * 4,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC,
    });
    const encoder = device.createCommandEncoder({ label: 'PhiloxProbe.encoder' });
    // The probes bind binding 2 and one of 0 (words) or 1 (floats), so the bind group is written out here.
    const bindGroup = device.createBindGroup({
      label: `${kernel.label}.bindGroup`,
      layout: kernel.pipeline.getBindGroupLayout(0),
      entries: [
        { binding: inputBinding, resource: { buffer: inputBuffer } },
        { binding: 2, resource: { buffer: outBuffer } },
      ],
    });
    encodePass(encoder, 'PhiloxProbe.pass', [
      { pipeline: kernel.pipeline, bindGroup, groups: gridForItems(device, kernel, items) },
    ]);
    const read = this.#staging.encodeRead(encoder, outBuffer, 0, outWords * 4);
    device.queue.submit([encoder.finish()]);
    const out = new Uint32Array(await read.map());
    inputBuffer.destroy();
    outBuffer.destroy();
    return out;
  }

  /** Destroys the staging buffers. */
  destroy(): void {
    this.#staging.destroy();
  }
}
