/**
 * Dense layer, Float64 reference. Per example: y = x·W + b, with x a row of
 * length `inputs`, W inputs × outputs (row-major), b of length `outputs`.
 */

/** y[n, j] = b[j] + Σ_i x[n, i] · W[i, j]. */
export function denseForward(
  x: Float64Array,
  weight: Float64Array,
  bias: Float64Array,
  batch: number,
  inputs: number,
  outputs: number,
): Float64Array {
  const y = new Float64Array(batch * outputs);
  for (let n = 0; n < batch; n++) {
    for (let j = 0; j < outputs; j++) {
      let sum = bias[j]!;
      for (let i = 0; i < inputs; i++) sum += x[n * inputs + i]! * weight[i * outputs + j]!;
      y[n * outputs + j] = sum;
    }
  }
  return y;
}

/** Gradients of a dense layer given dL/dy. */
export interface DenseGradients {
  /** dL/dx[n, i] = Σ_j dy[n, j] · W[i, j]   (dx = dy·Wᵀ) */
  readonly dx: Float64Array;
  /** dL/dW[i, j] = Σ_n x[n, i] · dy[n, j]   (dW = xᵀ·dy) */
  readonly dWeight: Float64Array;
  /** dL/db[j] = Σ_n dy[n, j] */
  readonly dBias: Float64Array;
}

/** Backward of denseForward. */
export function denseBackward(
  x: Float64Array,
  weight: Float64Array,
  dy: Float64Array,
  batch: number,
  inputs: number,
  outputs: number,
): DenseGradients {
  const dx = new Float64Array(batch * inputs);
  const dWeight = new Float64Array(inputs * outputs);
  const dBias = new Float64Array(outputs);
  for (let n = 0; n < batch; n++) {
    for (let j = 0; j < outputs; j++) {
      const g = dy[n * outputs + j]!;
      dBias[j]! += g;
      for (let i = 0; i < inputs; i++) {
        dx[n * inputs + i]! += g * weight[i * outputs + j]!;
        dWeight[i * outputs + j]! += x[n * inputs + i]! * g;
      }
    }
  }
  return { dx, dWeight, dBias };
}
