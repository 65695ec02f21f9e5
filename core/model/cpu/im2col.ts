/**
 * im2col and its adjoint col2im for one example of a 'valid' stride-1
 * convolution. The column matrix has one row per kernel tap r = (c·k + ky)·k + kx
 * and one column per output pixel q = oy·ow + ox:
 *   col[r, q] = x[c, oy + ky, ox + kx],
 * so the convolution is kernel (out × taps) · col (taps × pixels), which
 * lands directly in CHW order.
 */
import type { Conv2dLayer } from '../layout';

/** Fills col (taps × pixels) from the example at x[xOffset …]. */
export function im2col(layer: Conv2dLayer, x: Float32Array, xOffset: number, col: Float32Array): void {
  const { input, output, kernelSize: k } = layer;
  const pixels = output.height * output.width;
  for (let c = 0; c < input.channels; c++) {
    for (let ky = 0; ky < k; ky++) {
      for (let kx = 0; kx < k; kx++) {
        const rowStart = ((c * k + ky) * k + kx) * pixels;
        for (let oy = 0; oy < output.height; oy++) {
          // One output row reads a contiguous run of one input row.
          const source = xOffset + (c * input.height + oy + ky) * input.width + kx;
          const target = rowStart + oy * output.width;
          for (let ox = 0; ox < output.width; ox++) col[target + ox] = x[source + ox]!;
        }
      }
    }
  }
}

/** dx[dxOffset …] (one example, overwritten) = the adjoint of im2col applied to dCol: each tap adds back where it was read. */
export function col2im(layer: Conv2dLayer, dCol: Float32Array, dx: Float32Array, dxOffset: number): void {
  const { input, output, kernelSize: k } = layer;
  const pixels = output.height * output.width;
  dx.fill(0, dxOffset, dxOffset + layer.inputSize);
  for (let c = 0; c < input.channels; c++) {
    for (let ky = 0; ky < k; ky++) {
      for (let kx = 0; kx < k; kx++) {
        const rowStart = ((c * k + ky) * k + kx) * pixels;
        for (let oy = 0; oy < output.height; oy++) {
          const target = dxOffset + (c * input.height + oy + ky) * input.width + kx;
          const source = rowStart + oy * output.width;
          for (let ox = 0; ox < output.width; ox++) dx[target + ox] = dx[target + ox]! + dCol[source + ox]!;
        }
      }
    }
  }
}
