/**
 * Mean softmax cross-entropy over a batch, Float64 reference:
 *   L = (1/B) Σ_n [ logΣ_k exp(z[n, k]) − z[n, y_n] ]
 * with the log-sum-exp shifted by max_k z[n, k] so no exp overflows.
 */

/** The loss L for logits z (batch × classes) and labels y. */
export function softmaxCrossEntropyLoss(
  logits: Float64Array,
  labels: Uint8Array,
  batch: number,
  classes: number,
): number {
  let total = 0;
  for (let n = 0; n < batch; n++) {
    const row = logits.subarray(n * classes, (n + 1) * classes);
    total += logSumExp(row) - row[labelAt(labels, n, classes)]!;
  }
  return total / batch;
}

/** dL/dz[n, k] = (softmax(z[n])[k] − [k = y_n]) / B. */
export function softmaxCrossEntropyBackward(
  logits: Float64Array,
  labels: Uint8Array,
  batch: number,
  classes: number,
): Float64Array {
  const dLogits = new Float64Array(batch * classes);
  for (let n = 0; n < batch; n++) {
    const row = logits.subarray(n * classes, (n + 1) * classes);
    const lse = logSumExp(row);
    const label = labelAt(labels, n, classes);
    for (let k = 0; k < classes; k++) {
      const probability = Math.exp(row[k]! - lse);
      dLogits[n * classes + k] = (probability - (k === label ? 1 : 0)) / batch;
    }
  }
  return dLogits;
}

/** log Σ_k exp(z_k), computed as m + log Σ_k exp(z_k − m) with m = max z. */
export function logSumExp(z: Float64Array): number {
  let max = -Infinity;
  for (const value of z) if (value > max) max = value;
  let sum = 0;
  for (const value of z) sum += Math.exp(value - max);
  return max + Math.log(sum);
}

function labelAt(labels: Uint8Array, n: number, classes: number): number {
  const label = labels[n]!;
  if (label >= classes) throw new RangeError(`label ${label} of example ${n} is not below ${classes}`);
  return label;
}
