import { describe, expect, it } from 'vitest';
import { dct2, dctMatrix, idct2 } from './dct';
import { randomMatrix } from './random-matrix';
import { bothWays } from './testing/shapes';

const maxDiff = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  return worst;
};

describe('orthonormal DCT-II', () => {
  it('Dₙ is orthogonal (Dₙ Dₙᵀ = I to float64 rounding) for sizes 1 to 40', () => {
    for (let n = 1; n <= 40; n++) {
      const d = dctMatrix(n);
      for (let a = 0; a < n; a++) {
        for (let b = 0; b < n; b++) {
          let dot = 0;
          for (let i = 0; i < n; i++) dot += d[a * n + i]! * d[b * n + i]!;
          expect(Math.abs(dot - (a === b ? 1 : 0))).toBeLessThan(1e-13);
        }
      }
    }
  });

  it('dct2 is Σᵢⱼ G[i, j]·αₖ cos(π(2i+1)k/2m)·αₗ cos(π(2j+1)l/2n), the definition written out', () => {
    const [rows, cols] = [5, 7];
    const g = randomMatrix(rows, cols, 3);
    const c = dct2(g, rows, cols);
    const alpha = (k: number, n: number) => Math.sqrt((k === 0 ? 1 : 2) / n);
    for (let k = 0; k < rows; k++) {
      for (let l = 0; l < cols; l++) {
        let sum = 0;
        for (let i = 0; i < rows; i++) {
          for (let j = 0; j < cols; j++) {
            sum +=
              g[i * cols + j]! *
              alpha(k, rows) *
              Math.cos((Math.PI * (2 * i + 1) * k) / (2 * rows)) *
              alpha(l, cols) *
              Math.cos((Math.PI * (2 * j + 1) * l) / (2 * cols));
          }
        }
        expect(Math.abs(c[k * cols + l]! - sum)).toBeLessThan(1e-12);
      }
    }
  });

  it('equals D_m G D_nᵀ computed densely, on the MLP shape 784×10 and odd and prime sizes, tall and wide', () => {
    for (const [rows, cols] of bothWays([784, 10], [97, 15], [1, 128])) {
      const g = randomMatrix(rows, cols, rows + cols);
      const dm = dctMatrix(rows);
      const dn = dctMatrix(cols);
      const dense = new Float64Array(rows * cols);
      for (let k = 0; k < rows; k++) {
        for (let l = 0; l < cols; l++) {
          let sum = 0;
          for (let i = 0; i < rows; i++)
            for (let j = 0; j < cols; j++) sum += dm[k * rows + i]! * g[i * cols + j]! * dn[l * cols + j]!;
          dense[k * cols + l] = sum;
        }
      }
      expect(maxDiff(dct2(g, rows, cols), dense)).toBeLessThan(1e-10);
      expect(maxDiff(idct2(dense, rows, cols), g)).toBeLessThan(1e-10);
    }
  });

  it('a constant matrix has one coefficient, C[0, 0] = √(mn)·value', () => {
    const c = dct2(new Float64Array(12).fill(2), 3, 4);
    expect(c[0]).toBeCloseTo(2 * Math.sqrt(12), 12);
    expect(maxDiff(c.subarray(1), new Float64Array(11))).toBeLessThan(1e-13);
  });

  it('idct2 inverts dct2 and both keep the Frobenius norm (Parseval), on square, tall, wide and vector shapes', () => {
    for (const [rows, cols] of bothWays([8, 8], [20, 3], [1, 17], [1, 1])) {
      const g = randomMatrix(rows, cols, rows * 100 + cols);
      const c = dct2(g, rows, cols);
      expect(maxDiff(idct2(c, rows, cols), g)).toBeLessThan(1e-12);
      const norm = (x: ArrayLike<number>) => Array.from(x).reduce((s, v) => s + v * v, 0);
      expect(Math.abs(norm(c) - norm(g))).toBeLessThan(1e-11 * norm(g));
    }
  });

  it('idct2 of one coefficient is the atom d_k d_lᵀ', () => {
    const [rows, cols] = [6, 4];
    const c = new Float64Array(rows * cols);
    c[2 * cols + 3] = 1;
    const atom = idct2(c, rows, cols);
    const dm = dctMatrix(rows);
    const dn = dctMatrix(cols);
    for (let i = 0; i < rows; i++)
      for (let j = 0; j < cols; j++) expect(atom[i * cols + j]).toBeCloseTo(dm[2 * rows + i]! * dn[3 * cols + j]!, 14);
  });

  it('refuses arrays that are not rows×cols', () => {
    expect(() => dct2(new Float64Array(5), 2, 3)).toThrow(RangeError);
    expect(() => idct2(new Float64Array(6), 0, 6)).toThrow(RangeError);
    expect(() => dctMatrix(0)).toThrow(RangeError);
  });
});
