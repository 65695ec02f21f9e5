/**
 * 'Valid' stride-1 convolution on the CPU in float32, as im2col + matmul per
 * example: y_n (out × pixels) = K (out × taps) · col_n (taps × pixels) + b.
 * col_n is rebuilt in the backward pass instead of kept for the whole batch:
 * copying is cheap next to the product, and the scratch stays one example big.
 */
import type { Conv2dLayer } from '../layout';
import { col2im, im2col } from './im2col';
import { matmulAccumulate, matmulTransposedBAccumulate } from './matmul';

/** Elements of one example's column matrix (taps × output pixels): the size of the col scratch. */
export function columnSize(layer: Conv2dLayer): number {
  return layer.input.channels * layer.kernelSize * layer.kernelSize * layer.output.height * layer.output.width;
}

/** y (batch × out × oh × ow) = conv(x, K) + b; `col` is scratch of columnSize(layer). */
export function conv2dForward(
  layer: Conv2dLayer,
  params: Float32Array,
  x: Float32Array,
  y: Float32Array,
  col: Float32Array,
  batch: number,
): void {
  const { output, weight, bias } = layer;
  const taps = weight.shape[1];
  const pixels = output.height * output.width;
  for (let n = 0; n < batch; n++) {
    const yOffset = n * layer.outputSize;
    for (let o = 0; o < output.channels; o++)
      y.fill(params[bias.offset + o]!, yOffset + o * pixels, yOffset + (o + 1) * pixels);
    im2col(layer, x, n * layer.inputSize, col);
    matmulAccumulate({
      c: y,
      cOffset: yOffset,
      a: params,
      aOffset: weight.offset,
      aRowStride: taps,
      aColStride: 1,
      b: col,
      m: output.channels,
      k: taps,
      n: pixels,
    });
  }
}

/**
 * Adds dK = Σ_n dy_n · col_nᵀ and db = Σ dy into `gradient`, and writes
 * dx_n = col2im(Kᵀ · dy_n) unless dx is null. `col` and `dCol` are scratch.
 */
export function conv2dBackward(
  layer: Conv2dLayer,
  params: Float32Array,
  x: Float32Array,
  dy: Float32Array,
  dx: Float32Array | null,
  gradient: Float32Array,
  col: Float32Array,
  dCol: Float32Array,
  batch: number,
): void {
  const { output, weight, bias } = layer;
  const taps = weight.shape[1];
  const pixels = output.height * output.width;
  for (let n = 0; n < batch; n++) {
    const dyOffset = n * layer.outputSize;
    im2col(layer, x, n * layer.inputSize, col);
    matmulTransposedBAccumulate({
      c: gradient,
      cOffset: weight.offset,
      a: dy,
      aOffset: dyOffset,
      b: col,
      m: output.channels,
      k: pixels,
      n: taps,
    });
    for (let o = 0; o < output.channels; o++) {
      let sum = 0;
      for (let q = 0; q < pixels; q++) sum += dy[dyOffset + o * pixels + q]!;
      gradient[bias.offset + o] = gradient[bias.offset + o]! + sum;
    }
    if (dx === null) continue;
    dCol.fill(0, 0, taps * pixels);
    // Kᵀ is read in place: op(A)[r, o] = K[o·taps + r].
    matmulAccumulate({
      c: dCol,
      a: params,
      aOffset: weight.offset,
      aRowStride: 1,
      aColStride: taps,
      b: dy,
      bOffset: dyOffset,
      m: taps,
      k: output.channels,
      n: pixels,
    });
    col2im(layer, dCol, dx, n * layer.inputSize);
  }
}

/**
 * The im2col factors of the kernel gradient, dK = Σ_n dy_n·col_nᵀ = Lᵀ·R
 * (docs/design.md, "Decompositions"): one row per (example n, output pixel
 * q), row n·pixels + q of L (B·pixels × out) holding dy_n[·, q] and of R
 * (B·pixels × taps) holding col_n[·, q]. Written into `left` and `right`;
 * `col` is scratch of columnSize(layer).
 */
export function convFactors(
  layer: Conv2dLayer,
  x: Float32Array,
  dy: Float32Array,
  batch: number,
  col: Float32Array,
  left: Float32Array,
  right: Float32Array,
): void {
  const { output, weight } = layer;
  const taps = weight.shape[1];
  const out = output.channels;
  const pixels = output.height * output.width;
  for (let n = 0; n < batch; n++) {
    const dyOffset = n * layer.outputSize;
    im2col(layer, x, n * layer.inputSize, col);
    for (let q = 0; q < pixels; q++) {
      const row = n * pixels + q;
      for (let o = 0; o < out; o++) left[row * out + o] = dy[dyOffset + o * pixels + q]!;
      for (let r = 0; r < taps; r++) right[row * taps + r] = col[r * pixels + q]!;
    }
  }
}
