/**
 * Host of shaders/layers/, the layer kernels the GPU training backend
 * (client/gpu/training/gpuBackend.ts) is built from: bias_relu.wgsl,
 * relu_backward.wgsl, softmax_cross_entropy.wgsl, bias_grad.wgsl,
 * im2col.wgsl, col2im.wgsl, maxpool.wgsl, maxpool_backward.wgsl and
 * swap_axes.wgsl. Each is a few lines of binding, so one host serves them.
 *
 * Every method returns a `Dispatch` bound to its buffers, with its uniforms
 * written once: the backend makes them once per batch size and records them
 * every round (no per-round pipeline, bind group or buffer creation).
 */
import biasReluWgsl from '../../../shaders/layers/bias_relu.wgsl?raw';
import reluBackwardWgsl from '../../../shaders/layers/relu_backward.wgsl?raw';
import softmaxWgsl from '../../../shaders/layers/softmax_cross_entropy.wgsl?raw';
import biasGradWgsl from '../../../shaders/layers/bias_grad.wgsl?raw';
import im2colWgsl from '../../../shaders/layers/im2col.wgsl?raw';
import col2imWgsl from '../../../shaders/layers/col2im.wgsl?raw';
import maxpoolWgsl from '../../../shaders/layers/maxpool.wgsl?raw';
import maxpoolBackwardWgsl from '../../../shaders/layers/maxpool_backward.wgsl?raw';
import swapAxesWgsl from '../../../shaders/layers/swap_axes.wgsl?raw';
import { dispatchOf, gridForItems, uniformBuffer, type Dispatch } from '../runtime/dispatch';
import { kernelFamily, type Kernel } from '../runtime/pipelines';
import { withElements, withGrid, withStructs } from './common';

/** Geometry of a 'valid' stride-1 convolution over a batch, for im2col / col2im. */
export interface ConvGeometry {
  readonly channels: number;
  readonly batch: number;
  readonly height: number;
  readonly width: number;
  readonly kernel: number;
}

/** common/structs.wgsl's ConvParams, in its field order: the geometry `g` and the kernel's `count` of invocations. */
function convParams(g: ConvGeometry, count: number): number[] {
  return [g.channels, g.batch, g.height, g.width, g.kernel, g.height - g.kernel + 1, g.width - g.kernel + 1, count];
}

/**
 * Every layer kernel's source: all but bias_grad (one workgroup per channel) have one invocation per item; the
 * convolution and pooling kernels read their uniforms as common/structs.wgsl's ConvParams and PoolParams.
 */
const LAYER_KERNELS = {
  biasRelu: { code: withElements(biasReluWgsl), constants: { RELU: 1 } },
  bias: { code: withElements(biasReluWgsl), constants: { RELU: 0 } },
  reluBackward: { code: withElements(reluBackwardWgsl) },
  softmaxCrossEntropy: { code: withGrid(softmaxWgsl) },
  biasGrad: { code: biasGradWgsl },
  im2col: { code: withElements(withStructs(im2colWgsl)) },
  col2im: { code: withElements(withStructs(col2imWgsl)) },
  maxpool: { code: withElements(withStructs(maxpoolWgsl)) },
  maxpoolBackward: { code: withElements(withStructs(maxpoolBackwardWgsl)) },
  swapAxes: { code: withElements(swapAxesWgsl) },
};

/** The layer kernels of one device (pipelines from its pipeline cache). */
export class LayerKernels {
  readonly #device: GPUDevice;
  readonly #kernels: Readonly<Record<keyof typeof LAYER_KERNELS, Kernel>>;

  constructor(device: GPUDevice) {
    this.#device = device;
    this.#kernels = kernelFamily(device, 'Layers', LAYER_KERNELS);
  }

  /** x ← x + b[(i / inner) % channels], then ReLU when `relu` (layers/bias_relu.wgsl). */
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
    const kernel = relu ? this.#kernels.biasRelu : this.#kernels.bias;
    return this.#elementwise(
      owned,
      relu ? 'biasRelu' : 'bias',
      kernel,
      [count, channels, inner, biasOffset],
      [parameters, x],
      count,
    );
  }

  /** dy ← dy·[y > 0] over `count` elements (layers/relu_backward.wgsl). */
  reluBackward(owned: GPUBuffer[], y: GPUBuffer, dy: GPUBuffer, count: number): Dispatch {
    return this.#elementwise(owned, 'reluBackward', this.#kernels.reluBackward, [count, 0, 0, 0], [y, dy], count);
  }

  /** Per-example losses at losses[lossOffset …] and dLogits (layers/softmax_cross_entropy.wgsl). */
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
    return this.#bind(
      'softmaxCrossEntropy',
      this.#kernels.softmaxCrossEntropy,
      [params, logits, labels, dLogits, losses],
      gridForItems(this.#device, this.#kernels.softmaxCrossEntropy, batch),
    );
  }

  /** gradient[outOffset + o] = Σ of channel o of dy, for `channels` channels (layers/bias_grad.wgsl). */
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
    // one workgroup per channel
    return this.#bind('biasGrad', this.#kernels.biasGrad, [params, dy, gradient], [channels, 1, 1]);
  }

  /** col (taps × B·P) from x (C, B, H, W) (layers/im2col.wgsl). */
  im2col(owned: GPUBuffer[], x: GPUBuffer, col: GPUBuffer, g: ConvGeometry): Dispatch {
    const count = g.channels * g.kernel * g.kernel * g.batch * (g.height - g.kernel + 1) * (g.width - g.kernel + 1);
    return this.#elementwise(owned, 'im2col', this.#kernels.im2col, convParams(g, count), [x, col], count);
  }

  /** dx (C, B, H, W) from dcol (taps × B·P) (layers/col2im.wgsl). */
  col2im(owned: GPUBuffer[], dcol: GPUBuffer, dx: GPUBuffer, g: ConvGeometry): Dispatch {
    const count = g.channels * g.batch * g.height * g.width;
    return this.#elementwise(owned, 'col2im', this.#kernels.col2im, convParams(g, count), [dcol, dx], count);
  }

  /** y and winners of 2×2 max-pooling over `planes` planes of height × width (layers/maxpool.wgsl). */
  maxpool(
    owned: GPUBuffer[],
    x: GPUBuffer,
    y: GPUBuffer,
    winners: GPUBuffer,
    planes: number,
    height: number,
    width: number,
  ): Dispatch {
    const count = (planes * height * width) / 4;
    return this.#elementwise(
      owned,
      'maxpool',
      this.#kernels.maxpool,
      [planes, height, width, count],
      [x, y, winners],
      count,
    );
  }

  /** dx of 2×2 max-pooling from the forward pass's winners (layers/maxpool_backward.wgsl). */
  maxpoolBackward(
    owned: GPUBuffer[],
    winners: GPUBuffer,
    dy: GPUBuffer,
    dx: GPUBuffer,
    planes: number,
    height: number,
    width: number,
  ): Dispatch {
    const count = planes * height * width;
    return this.#elementwise(
      owned,
      'maxpoolBackward',
      this.#kernels.maxpoolBackward,
      [planes, height, width, count],
      [winners, dy, dx],
      count,
    );
  }

  /** y (B, A, P) = x (A, B, P) (layers/swap_axes.wgsl). */
  swapAxes(owned: GPUBuffer[], x: GPUBuffer, y: GPUBuffer, outer: number, middle: number, inner: number): Dispatch {
    const count = outer * middle * inner;
    return this.#elementwise(owned, 'swapAxes', this.#kernels.swapAxes, [outer, middle, inner, count], [x, y], count);
  }

  /** One invocation per element of `count`, uniform `words` at binding 0, then `buffers`. */
  #elementwise(
    owned: GPUBuffer[],
    name: string,
    kernel: Kernel,
    words: readonly number[],
    buffers: readonly GPUBuffer[],
    count: number,
  ): Dispatch {
    const params = this.#uniform(owned, name, words);
    return this.#bind(name, kernel, [params, ...buffers], gridForItems(this.#device, kernel, count));
  }

  /** A uniform buffer holding `words` as u32 (padded to 16 bytes), recorded in `owned`. */
  #uniform(owned: GPUBuffer[], name: string, words: readonly number[]): GPUBuffer {
    return uniformBuffer(this.#device, `Layers.${name}.params`, words, owned);
  }

  #bind(
    name: string,
    kernel: Kernel,
    buffers: readonly GPUBuffer[],
    groups: readonly [number, number, number],
  ): Dispatch {
    return dispatchOf(this.#device, kernel, `Layers.${name}`, buffers, groups);
  }
}
