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
  const width = layer.output.width;
  forEachRun(layer, (colStart, xStart) => {
    const source = xOffset + xStart;
    for (let ox = 0; ox < width; ox++) col[colStart + ox] = x[source + ox]!;
  });
}

/**
 * dx[dxOffset …] (one example, overwritten) = the adjoint of im2col applied to dCol: each tap adds back where it was
 * read.
 */
export function col2im(layer: Conv2dLayer, dCol: Float32Array, dx: Float32Array, dxOffset: number): void {
  const width = layer.output.width;
  dx.fill(0, dxOffset, dxOffset + layer.inputSize);
  forEachRun(layer, (colStart, xStart) => {
    const target = dxOffset + xStart;
    for (let ox = 0; ox < width; ox++) dx[target + ox] = dx[target + ox]! + dCol[colStart + ox]!;
  });
}

/**
 * The index map both share: for each tap and output row, the run of
 * output.width entries at col[colStart …] that reads x[xStart …] (one
 * example, offset 0), contiguous in both.
 */
function forEachRun(layer: Conv2dLayer, run: (colStart: number, xStart: number) => void): void {
  const { input, output, kernelSize: k } = layer;
  const pixels = output.height * output.width;
  for (let c = 0; c < input.channels; c++) {
    for (let ky = 0; ky < k; ky++) {
      for (let kx = 0; kx < k; kx++) {
        const rowStart = ((c * k + ky) * k + kx) * pixels;
        for (let oy = 0; oy < output.height; oy++)
          run(rowStart + oy * output.width, (c * input.height + oy + ky) * input.width + kx);
      }
    }
  }
}
