/** Validation shared by every scheme: a layer gradient is a finite rows×cols float32 matrix. */
import type { Shape } from './types';

/**
 * ‖g‖₂² and ‖g‖₁ of a layer gradient, each summed in float64 in index order (as squaredNorm and l1Norm sum
 * them).
 */
export interface GradientNorms {
  readonly normSq: number;
  readonly l1: number;
}

/** The norms of g a compression found on its way: ‖g‖², and ‖g‖₁ when it read g. */
export interface KnownNorms {
  readonly normSq: number;
  readonly l1?: number;
}

/**
 * Throws RangeError unless `shape` is two positive integers and `grad` holds
 * rows·cols finite values; returns ‖g‖² and ‖g‖₁ from the same pass. The
 * pass adds instead of testing each entry: a float32's square is at most
 * ~1.2e77, so the sums stay finite iff every entry is (NaN and ±Infinity
 * carry through a sum of non-negative terms), and only a failing gradient
 * is scanned again for the entry to name.
 */
export function checkGradient(grad: Float32Array, shape: Shape): GradientNorms {
  checkGradientShape(grad, shape);
  const norms = gradientNorms(grad);
  if (!Number.isFinite(norms.normSq) || !Number.isFinite(norms.l1)) {
    for (let i = 0; i < grad.length; i++) {
      if (!Number.isFinite(grad[i]!)) throw new RangeError(`gradient entry ${i} is ${grad[i]}`);
    }
  }
  return norms;
}

/** Throws RangeError unless `shape` is two positive integers and `grad` holds rows·cols values (its values unread). */
export function checkGradientShape(grad: Float32Array, shape: Shape): void {
  const [rows, cols] = shape;
  if (!Number.isInteger(rows) || !Number.isInteger(cols) || rows < 1 || cols < 1) {
    throw new RangeError(`bad gradient shape ${rows}×${cols}`);
  }
  if (grad.length !== rows * cols) {
    throw new RangeError(`gradient has ${grad.length} entries, shape ${rows}×${cols} needs ${rows * cols}`);
  }
}

/**
 * ‖g‖₂² and ‖g‖₁ of `grad` in one pass, unchecked (checkGradient checks
 * them). Four entries per iteration, each sum still added in index order
 * (the same values as one entry per iteration, in about two thirds of the
 * time on a 784×128 layer).
 */
export function gradientNorms(grad: Float32Array): GradientNorms {
  let normSq = 0;
  let l1 = 0;
  const n = grad.length;
  let i = 0;
  for (const whole = n - (n % 4); i < whole; i += 4) {
    const a = grad[i]!;
    const b = grad[i + 1]!;
    const c = grad[i + 2]!;
    const d = grad[i + 3]!;
    normSq += a * a;
    normSq += b * b;
    normSq += c * c;
    normSq += d * d;
    l1 += Math.abs(a);
    l1 += Math.abs(b);
    l1 += Math.abs(c);
    l1 += Math.abs(d);
  }
  for (; i < n; i++) {
    const g = grad[i]!;
    normSq += g * g;
    l1 += Math.abs(g);
  }
  return { normSq, l1 };
}
