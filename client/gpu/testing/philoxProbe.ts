/** Test-only host of philoxProbe.wgsl: Philox outputs and Bernoulli thresholds computed on the GPU. */
import probeWgsl from './philoxProbe.wgsl?raw';
import { dispatchGroups } from '../compact';
import { StagingPool } from '../runtimePools';
import { withRandomStream } from '../shaderSource';

/** One Philox input: counter (4 words) and key (2 words). */
export interface PhiloxInput {
  readonly counter: readonly [number, number, number, number];
  readonly key: readonly [number, number];
}

/** Runs the probe entry points on a device. */
export class PhiloxProbe {
  readonly #device: GPUDevice;
  readonly #philox: GPUComputePipeline;
  readonly #threshold: GPUComputePipeline;
  readonly #mulWide: GPUComputePipeline;
  readonly #staging: StagingPool;

  /** Compiles both probes. */
  constructor(device: GPUDevice) {
    this.#device = device;
    const module = device.createShaderModule({ label: 'PhiloxProbe.module', code: withRandomStream(probeWgsl) });
    const pipeline = (entryPoint: string) =>
      device.createComputePipeline({ label: `PhiloxProbe.${entryPoint}.pipeline`, layout: 'auto', compute: { module, entryPoint } });
    this.#philox = pipeline('philox');
    this.#threshold = pipeline('threshold');
    this.#mulWide = pipeline('mulWide');
    this.#staging = new StagingPool(device, 'PhiloxProbe.staging');
  }

  /** philox4x32 of each input; 4 words per input, in order. */
  async philox(inputs: readonly PhiloxInput[]): Promise<Uint32Array> {
    const words = new Uint32Array(inputs.length * 6);
    inputs.forEach(({ counter, key }, i) => words.set([...counter, ...key], 6 * i));
    return this.#run(this.#philox, 0, words, inputs.length * 4, Math.ceil(inputs.length / 64));
  }

  /** philoxMulWide of each pair (a, b): the 64-bit product as (high, low) words. */
  async mulWide(pairs: Uint32Array): Promise<Uint32Array> {
    return this.#run(this.#mulWide, 0, pairs, pairs.length, Math.ceil(pairs.length / 2 / 64));
  }

  /** bernoulliThreshold of each f32 value, computed by the WGSL function. */
  async thresholds(p: Float32Array): Promise<Uint32Array> {
    return this.#run(this.#threshold, 1, p, p.length, Math.ceil(p.length / 256));
  }

  async #run(pipeline: GPUComputePipeline, inputBinding: number, input: Uint32Array | Float32Array, outWords: number, groups: number): Promise<Uint32Array> {
    const device = this.#device;
    const inputBuffer = device.createBuffer({
      label: 'PhiloxProbe.input',
      size: input.byteLength,
      usage: GPUBufferUsage.STORAGE,
      mappedAtCreation: true,
    });
    new Uint8Array(inputBuffer.getMappedRange()).set(new Uint8Array(input.buffer, input.byteOffset, input.byteLength));
    inputBuffer.unmap();
    const outBuffer = device.createBuffer({ label: 'PhiloxProbe.out', size: outWords * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
    const encoder = device.createCommandEncoder({ label: 'PhiloxProbe.encoder' });
    const pass = encoder.beginComputePass({ label: 'PhiloxProbe.pass' });
    pass.setPipeline(pipeline);
    pass.setBindGroup(
      0,
      device.createBindGroup({
        label: 'PhiloxProbe.bindGroup',
        layout: pipeline.getBindGroupLayout(0),
        entries: [
          { binding: inputBinding, resource: { buffer: inputBuffer } },
          { binding: 2, resource: { buffer: outBuffer } },
        ],
      }),
    );
    dispatchGroups(pass, groups, device.limits.maxComputeWorkgroupsPerDimension);
    pass.end();
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
