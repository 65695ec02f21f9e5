/**
 * The WebGPU TrainingBackend: forward pass, softmax cross-entropy and
 * backward pass of a ModelLayout for a minibatch, entirely on the GPU, with
 * the register-blocked matmul (client/gpu/kernels/matmul.ts) for every product and
 * the layer kernels (client/gpu/kernels/layers.ts) for the rest.
 *
 * Layouts on the device:
 *  - dense activations are example-major, batch × features (as on the CPU);
 *  - convolution feature maps are channel-major across the batch, (C, B, H, W),
 *    so each convolution is ONE product K (out × taps) · col (taps × B·P) for
 *    the whole batch, and its weight gradient dY (out × B·P) · colᵀ is one
 *    product too (a long-K product that the matmul splits); layers/swap_axes.wgsl
 *    converts between the two layouts in front of a dense layer.
 *  - every parameter gradient is written (never accumulated) straight into
 *    one flat buffer laid out like the parameters, followed by the B
 *    per-example losses: one copy, one read-back per round.
 *
 * Buffers, bind groups and matmul plans are made once per batch size (a few
 * kept, like the CPU backend's workspaces) and reused every round.
 */
import type { DeviceTrainingBackend, GradientFactors, LossAndGradient } from '../../../core/model/backend';
import type { ModelLayout } from '../../../core/model/layout';
import type { MatmulShape } from '../../../core/linalg/matmul';
import { LayerKernels } from '../kernels/layers';
import { MatmulKernel, type MatmulOperands } from '../kernels/matmul';
import { dispatches, type BufferSlice, type Recordable } from '../runtime/dispatch';
import { StagingPool } from '../runtime/pools';

/**
 * The factors of a dense layer's weight gradient G = aᵀ·d (docs/design.md:
 * rank ≤ batch): a is batch × rows (the layer input), d is batch × cols
 * (dLoss/d(pre-activation)). Valid until the next call of the backend.
 */
export interface LowRankFactors {
  readonly a: BufferSlice;
  readonly d: BufferSlice;
  readonly batch: number;
}

/** A gradient that stays on the GPU (for GPU compression). */
export interface GpuGradient {
  /** parameterCount f32 laid out like the parameters, then `batch` per-example losses at lossOffset. */
  readonly buffer: GPUBuffer;
  readonly lossOffset: number;
  readonly batch: number;
  /** Low-rank factors of the dense weight gradients, by tensor index in layout.tensors. */
  readonly factors: ReadonlyMap<number, LowRankFactors>;
}

/** The WebGPU backend, with the device-side entry point GPU compression uses (computeGradient uploads the inputs). */
export interface GpuTrainingBackend extends DeviceTrainingBackend<GpuGradient> {
  readonly kind: 'webgpu';
  readonly device: GPUDevice;
  readonly layout: ModelLayout;
  /** Frees every buffer (the pipelines go with the device). */
  destroy(): void;
}

/** Workspaces (one per batch size) kept at once: training uses one size, evaluation one or two. */
const MAX_CACHED_WORKSPACES = 4;

/** Where a layer's input or output lives, and in which layout. */
interface Activation {
  readonly buffer: GPUBuffer;
  /** dLoss/d(this activation), or null where nothing needs it (the input images). */
  readonly gradient: GPUBuffer | null;
  /** 'features': batch × size; 'maps': (C, B, H, W). */
  readonly layout: 'features' | 'maps';
  readonly channels: number;
  readonly pixels: number;
}

/** Everything one batch size needs: buffers and the recorded program. */
class Workspace {
  readonly images: GPUBuffer;
  readonly labels: GPUBuffer;
  readonly gradient: GPUBuffer;
  readonly logits: GPUBuffer;
  readonly forward: Recordable[] = [];
  readonly backward: Recordable[] = [];
  readonly factors = new Map<number, LowRankFactors>();
  readonly #owned: GPUBuffer[] = [];

  constructor(
    readonly device: GPUDevice,
    readonly layout: ModelLayout,
    readonly batch: number,
    matmul: MatmulKernel,
  ) {
    const kernels = new LayerKernels(device);
    const owned = this.#owned;
    const buffer = (name: string, floats: number): GPUBuffer => {
      const created = device.createBuffer({
        label: `GpuBackend[${layout.kind},B=${batch}].${name}`,
        size: Math.max(16, Math.ceil(floats) * 4),
        usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC,
      });
      owned.push(created);
      return created;
    };
    const product = (shape: MatmulShape, operands: MatmulOperands): Recordable => matmul.plan(shape, operands);

    this.params = buffer('params', layout.parameterCount);
    this.images = buffer('images', batch * layout.inputSize);
    this.labels = buffer('labels', batch);
    this.gradient = buffer('gradient', layout.parameterCount + batch);
    const params = this.params;
    const gradient = this.gradient;
    const tensorIndex = new Map(layout.tensors.map((tensor, index) => [tensor, index]));

    if (layout.input.channels !== 1 && layout.layers[0]?.type === 'conv2d') {
      // Example-major images are (B, C, H, W); only C = 1 is also (C, B, H, W).
      throw new RangeError('GPU backend: convolutions need single-channel input images');
    }
    let x: Activation = {
      buffer: this.images,
      gradient: null,
      layout: layout.layers[0]?.type === 'conv2d' ? 'maps' : 'features',
      channels: layout.input.channels,
      pixels: layout.input.height * layout.input.width,
    };
    const backwardSteps: Recordable[][] = [];
    const layers = layout.layers;
    for (let i = 0; i < layers.length; i++) {
      const layer = layers[i]!;
      const fusedRelu = layers[i + 1]?.type === 'relu';
      const needsInputGradient = i > 0;
      const steps: Recordable[] = [];
      let y: Activation;
      switch (layer.type) {
        case 'dense': {
          const inputs = layer.inputSize;
          const outputs = layer.outputSize;
          // Dense layers read example-major features; convert a feature map first.
          let features = x;
          if (x.layout === 'maps' && x.channels > 1) {
            const flat = buffer(`${layer.name}.input`, batch * inputs);
            const flatGradient = needsInputGradient ? buffer(`${layer.name}.dInput`, batch * inputs) : null;
            this.forward.push(dispatches(kernels.swapAxes(owned, x.buffer, flat, x.channels, batch, x.pixels)));
            if (flatGradient !== null && x.gradient !== null) {
              steps.push(dispatches(kernels.swapAxes(owned, flatGradient, x.gradient, batch, x.channels, x.pixels)));
            }
            features = { buffer: flat, gradient: flatGradient, layout: 'features', channels: 1, pixels: inputs };
          }
          const out = buffer(`${layer.name}.output`, batch * outputs);
          const dOut = buffer(`${layer.name}.dOutput`, batch * outputs);
          this.forward.push(
            product(
              { m: batch, n: outputs, k: inputs },
              { a: features.buffer, b: params, c: out, offsetB: layer.weight.offset },
            ),
            dispatches(kernels.biasRelu(owned, params, out, batch * outputs, outputs, 1, layer.bias.offset, fusedRelu)),
          );
          // Backward, in the order it runs (the swap above, recorded first, runs last).
          const backward: Recordable[] = [
            product(
              { m: inputs, n: outputs, k: batch, transA: true },
              { a: features.buffer, b: dOut, c: gradient, offsetC: layer.weight.offset },
            ),
            dispatches(kernels.biasGrad(owned, dOut, gradient, outputs, batch, 1, outputs, layer.bias.offset)),
          ];
          if (needsInputGradient && features.gradient !== null) {
            backward.push(
              product(
                { m: batch, n: inputs, k: outputs, transB: true },
                { a: dOut, b: params, c: features.gradient, offsetB: layer.weight.offset },
              ),
            );
          }
          steps.unshift(...backward);
          this.factors.set(tensorIndex.get(layer.weight)!, {
            a: { buffer: features.buffer, offset: 0 },
            d: { buffer: dOut, offset: 0 },
            batch,
          });
          y = { buffer: out, gradient: dOut, layout: 'features', channels: 1, pixels: outputs };
          break;
        }
        case 'conv2d': {
          const { input, output, kernelSize } = layer;
          const taps = layer.weight.shape[1];
          const columns = batch * output.height * output.width;
          const geometry = {
            channels: input.channels,
            batch,
            height: input.height,
            width: input.width,
            kernel: kernelSize,
          };
          const col = buffer(`${layer.name}.col`, taps * columns);
          const out = buffer(`${layer.name}.output`, output.channels * columns);
          const dOut = buffer(`${layer.name}.dOutput`, output.channels * columns);
          this.forward.push(
            dispatches(kernels.im2col(owned, x.buffer, col, geometry)),
            product(
              { m: output.channels, n: columns, k: taps },
              { a: params, b: col, c: out, offsetA: layer.weight.offset },
            ),
            dispatches(
              kernels.biasRelu(
                owned,
                params,
                out,
                output.channels * columns,
                output.channels,
                columns,
                layer.bias.offset,
                fusedRelu,
              ),
            ),
          );
          steps.push(
            product(
              { m: output.channels, n: taps, k: columns, transB: true },
              { a: dOut, b: col, c: gradient, offsetC: layer.weight.offset },
            ),
            dispatches(
              kernels.biasGrad(owned, dOut, gradient, output.channels, columns, columns, 0, layer.bias.offset),
            ),
          );
          if (needsInputGradient && x.gradient !== null) {
            const dCol = buffer(`${layer.name}.dCol`, taps * columns);
            steps.push(
              product(
                { m: taps, n: columns, k: output.channels, transA: true },
                { a: params, b: dOut, c: dCol, offsetA: layer.weight.offset },
              ),
              dispatches(kernels.col2im(owned, dCol, x.gradient, geometry)),
            );
          }
          y = {
            buffer: out,
            gradient: dOut,
            layout: 'maps',
            channels: output.channels,
            pixels: output.height * output.width,
          };
          break;
        }
        case 'relu': {
          // Fused into the layer before it (layers/bias_relu.wgsl); only the backward gate remains.
          if (x.gradient === null) throw new RangeError('GPU backend: a ReLU must follow a dense or convolution layer');
          steps.push(dispatches(kernels.reluBackward(owned, x.buffer, x.gradient, batch * layer.outputSize)));
          y = x;
          break;
        }
        case 'maxpool2d': {
          const { input, output } = layer;
          const planes = input.channels * batch;
          const out = buffer('maxpool.output', batch * layer.outputSize);
          const dOut = buffer('maxpool.dOutput', batch * layer.outputSize);
          const winners = buffer('maxpool.winners', batch * layer.outputSize);
          this.forward.push(
            dispatches(kernels.maxpool(owned, x.buffer, out, winners, planes, input.height, input.width)),
          );
          if (x.gradient !== null) {
            steps.push(
              dispatches(kernels.maxpoolBackward(owned, winners, dOut, x.gradient, planes, input.height, input.width)),
            );
          }
          y = {
            buffer: out,
            gradient: dOut,
            layout: x.layout,
            channels: output.channels,
            pixels: output.height * output.width,
          };
          break;
        }
      }
      backwardSteps.push(steps);
      x = y;
    }
    if (x.gradient === null || x.layout !== 'features')
      throw new RangeError('GPU backend: the model must end in a dense layer');
    this.logits = x.buffer;
    this.loss = dispatches(
      kernels.softmaxCrossEntropy(
        owned,
        x.buffer,
        this.labels,
        x.gradient,
        gradient,
        batch,
        layout.classCount,
        layout.parameterCount,
      ),
    );
    for (let i = backwardSteps.length - 1; i >= 0; i--) this.backward.push(...backwardSteps[i]!);
  }

  readonly params: GPUBuffer;
  readonly loss: Recordable;

  destroy(): void {
    for (const buffer of this.#owned) buffer.destroy();
  }
}

/** Options of createGpuBackend. */
export interface GpuBackendOptions {
  /** The matmul kernel to use (one per device is enough); a new one by default. */
  readonly matmul?: MatmulKernel;
}

/** A backend that trains `layout` on `device`. Results are reused buffers (see TrainingBackend). */
export function createGpuBackend(
  device: GPUDevice,
  layout: ModelLayout,
  options: GpuBackendOptions = {},
): GpuTrainingBackend {
  const matmul = options.matmul ?? new MatmulKernel(device);
  const ownsMatmul = options.matmul === undefined;
  const staging = new StagingPool(device, 'GpuBackend.staging');
  const workspaces = new Map<number, Workspace>();
  const gradient = new Float32Array(layout.parameterCount);
  let labelScratch = new Uint32Array(0);

  const workspaceFor = (batch: number): Workspace => {
    let workspace = workspaces.get(batch);
    if (workspace === undefined) {
      if (workspaces.size >= MAX_CACHED_WORKSPACES) {
        const [oldest, old] = workspaces.entries().next().value!;
        workspaces.delete(oldest);
        // Queue order: work already submitted with it finishes before anything submitted later reuses memory.
        old.destroy();
      }
      workspace = new Workspace(device, layout, batch, matmul);
      workspaces.set(batch, workspace);
    }
    return workspace;
  };

  const upload = (workspace: Workspace, params: Float32Array, images: Float32Array, batch: number): void => {
    checkInputs(layout, params, images, batch);
    device.queue.writeBuffer(workspace.params, 0, params.buffer, params.byteOffset, params.byteLength);
    device.queue.writeBuffer(workspace.images, 0, images.buffer, images.byteOffset, batch * layout.inputSize * 4);
  };

  const computeGradient = (
    params: Float32Array,
    images: Float32Array,
    labels: Uint8Array,
    batch: number,
  ): GpuGradient => {
    const workspace = workspaceFor(batch);
    upload(workspace, params, images, batch);
    if (labels.length < batch) throw new RangeError(`${labels.length} labels for a batch of ${batch}`);
    if (labelScratch.length < batch) labelScratch = new Uint32Array(batch);
    for (let n = 0; n < batch; n++) {
      const label = labels[n]!;
      if (label >= layout.classCount)
        throw new RangeError(`label ${label} of example ${n} is not below ${layout.classCount}`);
      labelScratch[n] = label;
    }
    device.queue.writeBuffer(workspace.labels, 0, labelScratch.buffer, 0, batch * 4);
    const encoder = device.createCommandEncoder({ label: 'GpuBackend.lossAndGradient' });
    const pass = encoder.beginComputePass({ label: 'GpuBackend.lossAndGradient.pass' });
    for (const step of workspace.forward) step.record(pass);
    workspace.loss.record(pass);
    for (const step of workspace.backward) step.record(pass);
    pass.end();
    device.queue.submit([encoder.finish()]);
    return { buffer: workspace.gradient, lossOffset: layout.parameterCount, batch, factors: workspace.factors };
  };

  return {
    kind: 'webgpu',
    device,
    layout,
    computeGradient,
    settled: () => device.queue.onSubmittedWorkDone(),
    async lossAndGradient(params, images, labels, batch): Promise<LossAndGradient> {
      const result = computeGradient(params, images, labels, batch);
      // One submission reads the gradient, the losses and every dense layer's factors X, Δ (B × (rows + cols) floats
      // each).
      const encoder = device.createCommandEncoder({ label: 'GpuBackend.readGradient' });
      const gradientRead = staging.encodeRead(encoder, result.buffer, 0, (layout.parameterCount + batch) * 4);
      const factorReads = [...result.factors].map(([tensor, f]) => {
        const [rows, cols] = layout.tensors[tensor]!.shape;
        return {
          tensor,
          input: staging.encodeRead(encoder, f.a.buffer, f.a.offset, f.batch * rows * 4),
          delta: staging.encodeRead(encoder, f.d.buffer, f.d.offset, f.batch * cols * 4),
        };
      });
      device.queue.submit([encoder.finish()]);
      const all = new Float32Array(await gradientRead.map());
      gradient.set(all.subarray(0, layout.parameterCount));
      const factors = new Map<number, GradientFactors>();
      for (const [read, input, delta] of await Promise.all(
        factorReads.map(async (r) => [r, await r.input.map(), await r.delta.map()] as const),
      )) {
        factors.set(read.tensor, { input: new Float32Array(input), delta: new Float32Array(delta), batch });
      }
      return { loss: meanLoss(all, layout.parameterCount, batch), gradient, factors };
    },
    async predict(params, images, batch): Promise<Float32Array> {
      const workspace = workspaceFor(batch);
      upload(workspace, params, images, batch);
      const encoder = device.createCommandEncoder({ label: 'GpuBackend.predict' });
      const pass = encoder.beginComputePass({ label: 'GpuBackend.predict.pass' });
      for (const step of workspace.forward) step.record(pass);
      pass.end();
      const read = staging.encodeRead(encoder, workspace.logits, 0, batch * layout.classCount * 4);
      device.queue.submit([encoder.finish()]);
      return new Float32Array(await read.map());
    },
    destroy() {
      for (const workspace of workspaces.values()) workspace.destroy();
      workspaces.clear();
      staging.destroy();
      if (ownsMatmul) matmul.destroy();
    },
  };
}

/** (1/B) Σ losses[offset + n], summed in float64. */
export function meanLoss(values: Float32Array, offset: number, batch: number): number {
  let total = 0;
  for (let n = 0; n < batch; n++) total += values[offset + n]!;
  return total / batch;
}

function checkInputs(layout: ModelLayout, params: Float32Array, images: Float32Array, batch: number): void {
  if (params.length !== layout.parameterCount)
    throw new RangeError(`${layout.kind}: ${params.length} parameters, expected ${layout.parameterCount}`);
  if (!Number.isInteger(batch) || batch < 1) throw new RangeError(`batch must be a positive integer, got ${batch}`);
  if (images.length < batch * layout.inputSize)
    throw new RangeError(`${images.length} pixels do not hold ${batch} images of ${layout.inputSize}`);
}
