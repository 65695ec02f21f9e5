/** Validation shared by every scheme: a layer gradient is a finite rows×cols float32 matrix. */
import type { Shape } from './types';

/** Throws RangeError unless `shape` is two positive integers and `grad` holds rows·cols finite values. */
export function checkGradient(grad: Float32Array, shape: Shape): void {
  const [rows, cols] = shape;
  if (!Number.isInteger(rows) || !Number.isInteger(cols) || rows < 1 || cols < 1) {
    throw new RangeError(`bad gradient shape ${rows}×${cols}`);
  }
  if (grad.length !== rows * cols) {
    throw new RangeError(`gradient has ${grad.length} entries, shape ${rows}×${cols} needs ${rows * cols}`);
  }
  for (let i = 0; i < grad.length; i++) {
    if (!Number.isFinite(grad[i]!)) throw new RangeError(`gradient entry ${i} is ${grad[i]}`);
  }
}
