/** Dense layer on the CPU in float32: y = x·W + b per example, W stored inputs × outputs. */
import type { DenseLayer } from '../layout';
import { matmulAccumulate, matmulTransposedBAccumulate } from './matmul';

/** y (batch × outputs) = x·W + b. */
export function denseForward(
  layer: DenseLayer,
  params: Float32Array,
  x: Float32Array,
  y: Float32Array,
  batch: number,
): void {
  const { inputSize: inputs, outputSize: outputs, weight, bias } = layer;
  for (let n = 0; n < batch; n++) {
    for (let j = 0; j < outputs; j++) y[n * outputs + j] = params[bias.offset + j]!;
  }
  matmulAccumulate({
    c: y,
    a: x,
    aRowStride: inputs,
    aColStride: 1,
    b: params,
    bOffset: weight.offset,
    m: batch,
    k: inputs,
    n: outputs,
  });
}

/**
 * Adds dW = xᵀ·dy and db = Σ_n dy into `gradient`, and writes dx = dy·Wᵀ
 * unless dx is null (the first layer needs no gradient for its input).
 */
export function denseBackward(
  layer: DenseLayer,
  params: Float32Array,
  x: Float32Array,
  dy: Float32Array,
  dx: Float32Array | null,
  gradient: Float32Array,
  batch: number,
): void {
  const { inputSize: inputs, outputSize: outputs, weight, bias } = layer;
  // xᵀ is read in place: op(A)[i, n] = x[n·inputs + i].
  matmulAccumulate({
    c: gradient,
    cOffset: weight.offset,
    a: x,
    aRowStride: 1,
    aColStride: inputs,
    b: dy,
    m: inputs,
    k: batch,
    n: outputs,
  });
  for (let n = 0; n < batch; n++) {
    for (let j = 0; j < outputs; j++) gradient[bias.offset + j] = gradient[bias.offset + j]! + dy[n * outputs + j]!;
  }
  if (dx === null) return;
  dx.fill(0, 0, batch * inputs);
  matmulTransposedBAccumulate({ c: dx, a: dy, b: params, bOffset: weight.offset, m: batch, k: outputs, n: inputs });
}
