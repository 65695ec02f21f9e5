/**
 * 2×2 max-pooling with stride 2, Float64 reference. On ties the first
 * maximum in window order (top-left, top-right, bottom-left, bottom-right)
 * wins; every backend uses the same rule so gradients agree exactly.
 */
import type { MaxPool2dLayer } from '../layout';

/** y[n, c, oy, ox] = max over the 2×2 window at (2·oy, 2·ox). */
export function maxPool2dForward(layer: MaxPool2dLayer, x: Float64Array, batch: number): Float64Array {
  const y = new Float64Array(batch * layer.outputSize);
  forEachWindow(layer, batch, (outIndex, topLeft) => {
    y[outIndex] = x[winnerIndex(layer, x, topLeft)]!;
  });
  return y;
}

/** dL/dx = dL/dy at each window's maximum, 0 elsewhere. */
export function maxPool2dBackward(
  layer: MaxPool2dLayer,
  x: Float64Array,
  dy: Float64Array,
  batch: number,
): Float64Array {
  const dx = new Float64Array(batch * layer.inputSize);
  forEachWindow(layer, batch, (outIndex, topLeft) => {
    dx[winnerIndex(layer, x, topLeft)]! += dy[outIndex]!;
  });
  return dx;
}

/** Index in x of the top-left element of each window, with the window's output index. */
function forEachWindow(layer: MaxPool2dLayer, batch: number, visit: (outIndex: number, topLeft: number) => void): void {
  const { input, output } = layer;
  for (let n = 0; n < batch; n++) {
    for (let c = 0; c < output.channels; c++) {
      for (let oy = 0; oy < output.height; oy++) {
        for (let ox = 0; ox < output.width; ox++) {
          const outIndex = ((n * output.channels + c) * output.height + oy) * output.width + ox;
          const topLeft = ((n * input.channels + c) * input.height + 2 * oy) * input.width + 2 * ox;
          visit(outIndex, topLeft);
        }
      }
    }
  }
}

/** Index of the first maximum among the window's four elements. */
function winnerIndex(layer: MaxPool2dLayer, x: Float64Array, topLeft: number): number {
  const w = layer.input.width;
  let best = topLeft;
  for (const candidate of [topLeft + 1, topLeft + w, topLeft + w + 1]) {
    if (x[candidate]! > x[best]!) best = candidate;
  }
  return best;
}
