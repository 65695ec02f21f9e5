/**
 * 2×2 max-pooling, stride 2, on the CPU in float32. The forward pass records
 * which element of each window won (0 top-left, 1 top-right, 2 bottom-left,
 * 3 bottom-right; the first maximum on ties, as in the reference), so the
 * backward pass routes each gradient without comparing again.
 */
import type { MaxPool2dLayer } from '../layout';

/** y = window maxima; winners[i] = position of output i's maximum in its window. */
export function maxPool2dForward(
  layer: MaxPool2dLayer,
  x: Float32Array,
  y: Float32Array,
  winners: Uint8Array,
  batch: number,
): void {
  const { input, output } = layer;
  const planes = batch * output.channels;
  let out = 0;
  for (let plane = 0; plane < planes; plane++) {
    const planeStart = plane * input.height * input.width;
    for (let oy = 0; oy < output.height; oy++) {
      const top = planeStart + 2 * oy * input.width;
      const bottom = top + input.width;
      for (let ox = 0; ox < output.width; ox++) {
        let best = x[top + 2 * ox]!;
        let winner = 0;
        const topRight = x[top + 2 * ox + 1]!;
        if (topRight > best) {
          best = topRight;
          winner = 1;
        }
        const bottomLeft = x[bottom + 2 * ox]!;
        if (bottomLeft > best) {
          best = bottomLeft;
          winner = 2;
        }
        const bottomRight = x[bottom + 2 * ox + 1]!;
        if (bottomRight > best) {
          best = bottomRight;
          winner = 3;
        }
        y[out] = best;
        winners[out] = winner;
        out++;
      }
    }
  }
}

/** dx = dy at each window's recorded winner, 0 elsewhere. */
export function maxPool2dBackward(
  layer: MaxPool2dLayer,
  winners: Uint8Array,
  dy: Float32Array,
  dx: Float32Array,
  batch: number,
): void {
  const { input, output } = layer;
  const planes = batch * output.channels;
  dx.fill(0, 0, batch * layer.inputSize);
  let out = 0;
  for (let plane = 0; plane < planes; plane++) {
    const planeStart = plane * input.height * input.width;
    for (let oy = 0; oy < output.height; oy++) {
      const top = planeStart + 2 * oy * input.width;
      for (let ox = 0; ox < output.width; ox++) {
        const winner = winners[out]!;
        // winner >> 1 picks the row, winner & 1 the column inside the window.
        dx[top + (winner >> 1) * input.width + 2 * ox + (winner & 1)] = dy[out]!;
        out++;
      }
    }
  }
}
