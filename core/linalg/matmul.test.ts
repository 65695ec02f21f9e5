import { describe, expect, test } from 'vitest';
import { matmul, matmulExtents, resolveMatmulShape } from './matmul';

describe('matmul (CPU reference)', () => {
  // A = [1 2 3; 4 5 6] (2×3), B = [7 8; 9 10; 11 12] (3×2): A·B = [58 64; 139 154].
  const a = new Float32Array([1, 2, 3, 4, 5, 6]);
  const aT = new Float32Array([1, 4, 2, 5, 3, 6]); // A stored transposed (3×2)
  const b = new Float32Array([7, 8, 9, 10, 11, 12]);
  const bT = new Float32Array([7, 9, 11, 8, 10, 12]); // B stored transposed (2×3)
  const product = [58, 64, 139, 154];

  test('every transpose flag reads the same op(A)·op(B)', () => {
    for (const [transA, transB] of [
      [false, false],
      [true, false],
      [false, true],
      [true, true],
    ] as const) {
      const c = new Float32Array(4);
      matmul({ m: 2, n: 2, k: 3, transA, transB }, transA ? aT : a, transB ? bT : b, c);
      expect(Array.from(c)).toEqual(product);
    }
  });

  test('α and β: C ← α·A·B + β·C; β = 0 ignores NaN in C', () => {
    const c = new Float32Array([1, 1, 1, 1]);
    matmul({ m: 2, n: 2, k: 3, alpha: 2, beta: -1 }, a, b, c);
    expect(Array.from(c)).toEqual(product.map((v) => 2 * v - 1));
    const d = new Float32Array(4).fill(NaN);
    matmul({ m: 2, n: 2, k: 3 }, a, b, d);
    expect(Array.from(d)).toEqual(product);
  });

  test('batches with a broadcast B and padded C', () => {
    const shape = { m: 2, n: 2, k: 3, batch: 2, strideB: 0, strideC: 5 };
    expect(matmulExtents(shape)).toEqual({ a: 12, b: 6, c: 9 });
    const c = new Float32Array(9).fill(-7);
    matmul(shape, new Float32Array([...a, ...a.map((v) => -v)]), b, c);
    expect(Array.from(c)).toEqual([...product, -7, ...product.map((v) => -v)]);
  });

  test('rejects bad sizes and short arrays', () => {
    expect(() => resolveMatmulShape({ m: -1, n: 2, k: 2 })).toThrow(RangeError);
    expect(() => resolveMatmulShape({ m: 1.5, n: 2, k: 2 })).toThrow(RangeError);
    expect(() => matmul({ m: 2, n: 2, k: 3 }, a, b, new Float32Array(3))).toThrow(RangeError);
  });
});
