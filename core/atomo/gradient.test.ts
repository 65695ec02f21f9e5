import { describe, expect, it } from 'vitest';
import { checkGradient } from './gradient';
import { l1Norm } from './indicator';
import { squaredNorm } from './variance';

describe('checkGradient', () => {
  it('returns ‖g‖² and ‖g‖₁ summed exactly as squaredNorm and l1Norm sum them', () => {
    const grad = Float32Array.from({ length: 257 }, (_, i) => Math.sin(i * 1.7) * 10 ** ((i % 9) - 4));
    expect(checkGradient(grad, [1, 257])).toEqual({ normSq: squaredNorm(grad), l1: l1Norm(grad) });
    expect(checkGradient(new Float32Array(6), [2, 3])).toEqual({ normSq: 0, l1: 0 });
  });

  it('takes the largest float32 values (their squares stay finite in float64)', () => {
    const grad = new Float32Array(1024).fill(3.4e38);
    grad[5] = -3.4e38;
    const { normSq, l1 } = checkGradient(grad, [32, 32]);
    expect(Number.isFinite(normSq)).toBe(true);
    expect(l1).toBeCloseTo(1024 * Math.fround(3.4e38), -30);
  });

  it('names the first non-finite entry, wherever it is', () => {
    for (const [value, at] of [
      [Number.NaN, 0],
      [Number.POSITIVE_INFINITY, 17],
      [Number.NEGATIVE_INFINITY, 63],
    ] as const) {
      const grad = new Float32Array(64).fill(0.5);
      grad[at] = value;
      if (at > 20) grad[at - 20] = Number.NaN; // an earlier one is the one named
      const first = at > 20 ? at - 20 : at;
      expect(() => checkGradient(grad, [8, 8])).toThrow(new RangeError(`gradient entry ${first} is ${grad[first]}`));
    }
    // +Infinity and −Infinity both present: their squares and absolute values are +Infinity, so the check still
    // fails.
    const both = new Float32Array(4);
    both[1] = Number.POSITIVE_INFINITY;
    both[2] = Number.NEGATIVE_INFINITY;
    expect(() => checkGradient(both, [2, 2])).toThrow(/gradient entry 1 is Infinity/);
  });

  it('refuses a bad shape or a length that does not match it', () => {
    expect(() => checkGradient(new Float32Array(6), [2, 2])).toThrow(/needs 4/);
    expect(() => checkGradient(new Float32Array(0), [0, 3])).toThrow(/bad gradient shape/);
    expect(() => checkGradient(new Float32Array(3), [1.5, 2])).toThrow(/bad gradient shape/);
  });
});
