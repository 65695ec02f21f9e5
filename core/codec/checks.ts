/**
 * Validation helpers shared by the scheme modules, so every scheme words
 * the same problem the same way.
 */
import { CodecError } from './errors';
import { firstNonFinite } from './floats';

/** Throws 'length-mismatch' unless `array.length === expected`. */
export function checkLength(context: string, name: string, actual: number, expected: number, why: string): void {
  if (actual !== expected) {
    throw new CodecError('length-mismatch', `${context}: ${name} has length ${actual}, expected ${expected} (${why})`);
  }
}

/** Throws 'non-finite' at the first NaN or ±Infinity of `values`. */
export function checkFiniteArray(context: string, name: string, values: Float32Array): void {
  const at = firstNonFinite(values);
  if (at >= 0) {
    throw new CodecError('non-finite', `${context}: ${name}[${at}] is ${values[at]}, not a finite number`);
  }
}

/** Throws 'non-finite' or 'negative-scale' unless `value` is finite and ≥ 0 (a norm or scaler). */
export function checkScale(context: string, name: string, value: number): void {
  if (!Number.isFinite(value)) {
    throw new CodecError('non-finite', `${context}: ${name} is ${value}, not a finite number`);
  }
  if (value < 0) {
    throw new CodecError('negative-scale', `${context}: ${name} is ${value}, must be ≥ 0`);
  }
}
