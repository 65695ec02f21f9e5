/**
 * Host side of the layer kernels the GPU training backend is built from
 * (shaders/bias_relu.wgsl, relu_backward.wgsl, softmax_cross_entropy.wgsl,
 * bias_grad.wgsl, im2col.wgsl, col2im.wgsl, maxpool.wgsl,
 * maxpool_backward.wgsl, swap_axes.wgsl). Each is a few lines of binding, so
 * they share one file instead of nine wrappers of the same shape.
 *
 * Every method returns a `Dispatch` bound to its buffers, with its uniforms
 * written once: the backend makes them once per batch size and records them
 * every round (no per-round pipeline, bind group or buffer creation).
 */
import biasReluWgsl from '../../../shaders/bias_relu.wgsl?raw';
import reluBackwardWgsl from '../../../shaders/relu_backward.wgsl?raw';
import softmaxWgsl from '../../../shaders/softmax_cross_entropy.wgsl?raw';
import biasGradWgsl from '../../../shaders/bias_grad.wgsl?raw';
import im2colWgsl from '../../../shaders/im2col.wgsl?raw';
import col2imWgsl from '../../../shaders/col2im.wgsl?raw';
import maxpoolWgsl from '../../../shaders/maxpool.wgsl?raw';
import maxpoolBackwardWgsl from '../../../shaders/maxpool_backward.wgsl?raw';
import swapAxesWgsl from '../../../shaders/swap_axes.wgsl?raw';

/** One recorded dispatch: pipeline, bind group, grid. */
export interface Dispatch {
  readonly pipeline: GPUComputePipeline;
  readonly bindGroup: GPUBindGroup;
  readonly groups: readonly [number, number, number];
}

/** Anything that records into an open compute pass (a Dispatch list, a matmul plan). */
export interface Recordable {
  record(pass: GPUComputePassEncoder): void;
}

/** Wraps dispatches as a Recordable. */
export function dispatches(...list: readonly Dispatch[]): Recordable {
  return {
    record(pass) {
      for (const { pipeline, bindGroup, groups } of list) {
        pass.setPipeline(pipeline);
        pass.setBindGroup(0, bindGroup);
        pass.dispatchWorkgroups(...groups);
      }
    },
  };
}

/** Invocations per workgroup of the elementwise kernels. */
const ELEMENTWISE_GROUP = 256;

/** Geometry of a 'valid' stride-1 convolution over a batch, for im2col / col2im. */
export interface ConvGeometry {
  readonly channels: number;
  readonly batch: number;
  readonly height: number;
  readonly width: number;
  readonly kernel: number;
}

/** The layer kernels of one device, compiled once. */
export class LayerKernels {
  static readonly #cache = new WeakMap<GPUDevice, LayerKernels>();

  readonly #device: GPUDevice;
  readonly #biasRelu: GPUComputePipeline;
  readonly #biasOnly: GPUComputePipeline;
  readonly #reluBackward: GPUComputePipeline;
  readonly #softmax: GPUComputePipeline;
  readonly #biasGrad: GPUComputePipeline;
  readonly #im2col: GPUComputePipeline;
  readonly #col2im: GPUComputePipeline;
  readonly #maxpool: GPUComputePipeline;
  readonly #maxpoolBackward: GPUComputePipeline;
  readonly #swapAxes: GPUComputePipeline;

  /** The kernels of `device`, compiled on first use. */
  static forDevice(device: GPUDevice): LayerKernels {
    let kernels = LayerKernels.#cache.get(device);
    if (kernels === undefined) {
      kernels = new LayerKernels(device);
      LayerKernels.#cache.set(device, kernels);
    }
    return kernels;
  }

  private constructor(device: GPUDevice) {
    this.#device = device;
    const make = (name: string, code: string, constants?: Record<string, number>): GPUComputePipeline =>
      device.createComputePipeline({
        label: `Layer.${name}.pipeline`,
        layout: 'auto',
        compute: {
          module: device.createShaderModule({ label: `Layer.${name}.module`, code }),
          entryPoint: 'main',
          ...(constants === undefined ? {} : { constants }),
        },
      });
    this.#biasRelu = make('biasRelu', biasReluWgsl, { RELU: 1 });
    this.#biasOnly = make('bias', biasReluWgsl, { RELU: 0 });
    this.#reluBackward = make('reluBackward', reluBackwardWgsl);
    this.#softmax = make('softmaxCrossEntropy', softmaxWgsl);
    this.#biasGrad = make('biasGrad', biasGradWgsl);
    this.#im2col = make('im2col', im2colWgsl);
    this.#col2im = make('col2im', col2imWgsl);
    this.#maxpool = make('maxpool', maxpoolWgsl);
    this.#maxpoolBackward = make('maxpoolBackward', maxpoolBackwardWgsl);
    this.#swapAxes = make('swapAxes', swapAxesWgsl);
  }

  /** x ← x + b[(i / inner) % channels], then ReLU when `relu` (bias_relu.wgsl). */
  biasRelu(
    owned: GPUBuffer[],
    parameters: GPUBuffer,
    x: GPUBuffer,
    count: number,
    channels: number,
    inner: number,
    biasOffset: number,
    relu: boolean,
  ): Dispatch {
    const pipeline = relu ? this.#biasRelu : this.#biasOnly;
    return this.#elementwise(owned, relu ? 'biasRelu' : 'bias', pipeline, [count, channels, inner, biasOffset], [parameters, x], count);
  }

  /** dy ← dy·[y > 0] over `count` elements (relu_backward.wgsl). */
  reluBackward(owned: GPUBuffer[], y: GPUBuffer, dy: GPUBuffer, count: number): Dispatch {
    return this.#elementwise(owned, 'reluBackward', this.#reluBackward, [count, 0, 0, 0], [y, dy], count);
  }

  /** Per-example losses at losses[lossOffset …] and dLogits (softmax_cross_entropy.wgsl). */
  softmaxCrossEntropy(
    owned: GPUBuffer[],
    logits: GPUBuffer,
    labels: GPUBuffer,
    dLogits: GPUBuffer,
    losses: GPUBuffer,
    batch: number,
    classes: number,
    lossOffset: number,
  ): Dispatch {
    const params = this.#uniform(owned, 'softmaxCrossEntropy', [batch, classes, lossOffset, 0]);
    return this.#bind('softmaxCrossEntropy', this.#softmax, [params, logits, labels, dLogits, losses], [Math.ceil(batch / 64), 1, 1]);
  }

  /** gradient[outOffset + o] = Σ of channel o of dy, for `channels` channels (bias_grad.wgsl). */
  biasGrad(
    owned: GPUBuffer[],
    dy: GPUBuffer,
    gradient: GPUBuffer,
    channels: number,
    count: number,
    inner: number,
    outerStride: number,
    outOffset: number,
  ): Dispatch {
    const params = this.#uniform(owned, 'biasGrad', [count, inner, outerStride, outOffset]);
    return this.#bind('biasGrad', this.#biasGrad, [params, dy, gradient], [channels, 1, 1]);
  }

  /** col (taps × B·P) from x (C, B, H, W) (im2col.wgsl). */
  im2col(owned: GPUBuffer[], x: GPUBuffer, col: GPUBuffer, g: ConvGeometry): Dispatch {
    const outHeight = g.height - g.kernel + 1;
    const outWidth = g.width - g.kernel + 1;
    const count = g.channels * g.kernel * g.kernel * g.batch * outHeight * outWidth;
    return this.#elementwise(owned, 'im2col', this.#im2col, [g.channels, g.batch, g.height, g.width, g.kernel, outHeight, outWidth, count], [x, col], count);
  }

  /** dx (C, B, H, W) from dcol (taps × B·P) (col2im.wgsl). */
  col2im(owned: GPUBuffer[], dcol: GPUBuffer, dx: GPUBuffer, g: ConvGeometry): Dispatch {
    const count = g.channels * g.batch * g.height * g.width;
    const words = [g.channels, g.batch, g.height, g.width, g.kernel, g.height - g.kernel + 1, g.width - g.kernel + 1, count];
    return this.#elementwise(owned, 'col2im', this.#col2im, words, [dcol, dx], count);
  }

  /** y and winners of 2×2 max-pooling over `planes` planes of height × width (maxpool.wgsl). */
  maxpool(owned: GPUBuffer[], x: GPUBuffer, y: GPUBuffer, winners: GPUBuffer, planes: number, height: number, width: number): Dispatch {
    const count = (planes * height * width) / 4;
    return this.#elementwise(owned, 'maxpool', this.#maxpool, [planes, height, width, count], [x, y, winners], count);
  }

  /** dx of 2×2 max-pooling from the forward pass's winners (maxpool_backward.wgsl). */
  maxpoolBackward(owned: GPUBuffer[], winners: GPUBuffer, dy: GPUBuffer, dx: GPUBuffer, planes: number, height: number, width: number): Dispatch {
    const count = planes * height * width;
    return this.#elementwise(owned, 'maxpoolBackward', this.#maxpoolBackward, [planes, height, width, count], [winners, dy, dx], count);
  }

  /** y (B, A, P) = x (A, B, P) (swap_axes.wgsl). */
  swapAxes(owned: GPUBuffer[], x: GPUBuffer, y: GPUBuffer, outer: number, middle: number, inner: number): Dispatch {
    const count = outer * middle * inner;
    return this.#elementwise(owned, 'swapAxes', this.#swapAxes, [outer, middle, inner, count], [x, y], count);
  }

  #elementwise(
    owned: GPUBuffer[],
    name: string,
    pipeline: GPUComputePipeline,
    words: readonly number[],
    buffers: readonly GPUBuffer[],
    count: number,
  ): Dispatch {
    const params = this.#uniform(owned, name, words);
    const groups = Math.max(1, Math.ceil(count / ELEMENTWISE_GROUP));
    const x = Math.min(groups, this.#device.limits.maxComputeWorkgroupsPerDimension);
    return this.#bind(name, pipeline, [params, ...buffers], [x, Math.ceil(groups / x), 1]);
  }

  /** A uniform buffer holding `words` as u32 (padded to 16 bytes), recorded in `owned`. */
  #uniform(owned: GPUBuffer[], name: string, words: readonly number[]): GPUBuffer {
    const size = Math.ceil(words.length / 4) * 16;
    const buffer = this.#device.createBuffer({ label: `Layer.${name}.params`, size, usage: GPUBufferUsage.UNIFORM, mappedAtCreation: true });
    new Uint32Array(buffer.getMappedRange()).set(words);
    buffer.unmap();
    owned.push(buffer);
    return buffer;
  }

  #bind(name: string, pipeline: GPUComputePipeline, buffers: readonly GPUBuffer[], groups: readonly [number, number, number]): Dispatch {
    const bindGroup = this.#device.createBindGroup({
      label: `Layer.${name}.bindGroup`,
      layout: pipeline.getBindGroupLayout(0),
      entries: buffers.map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
    return { pipeline, bindGroup, groups };
  }
}
