/**
 * Mean softmax cross-entropy on the CPU: L = (1/B) Σ_n [lse(z_n) − z_n[y_n]],
 * dL/dz = (softmax(z) − onehot(y)) / B. Sums are kept in double precision.
 */

/** Returns L and writes dL/dz (batch × classes) into dLogits. */
export function softmaxCrossEntropy(
  logits: Float32Array,
  labels: Uint8Array,
  dLogits: Float32Array,
  batch: number,
  classes: number,
): number {
  let total = 0;
  for (let n = 0; n < batch; n++) {
    const row = n * classes;
    const lse = rowLogSumExp(logits, row, classes);
    const label = labels[n]!;
    if (label >= classes) throw new RangeError(`label ${label} of example ${n} is not below ${classes}`);
    total += lse - logits[row + label]!;
    for (let k = 0; k < classes; k++) {
      const probability = Math.exp(logits[row + k]! - lse);
      dLogits[row + k] = (probability - (k === label ? 1 : 0)) / batch;
    }
  }
  return total / batch;
}

/** log Σ_k exp(z[row + k]), shifted by the row maximum so no exp overflows. */
export function rowLogSumExp(logits: Float32Array, row: number, classes: number): number {
  let max = -Infinity;
  for (let k = 0; k < classes; k++) max = Math.max(max, logits[row + k]!);
  let sum = 0;
  for (let k = 0; k < classes; k++) sum += Math.exp(logits[row + k]! - max);
  return max + Math.log(sum);
}
