import { describe, expect, it } from 'vitest';
import { randomMatrix } from '../linalg/random-matrix';
import { seededRng } from '../testing/seeded';
import {
  layerStatistics,
  outerProducts,
  outerProductsInto,
  realisedStats,
  reconstruct,
  rowOfOuterProducts,
} from './reconstruct';
import { l1Norm } from './indicator';
import { realisedError, squaredNorm } from './variance';
import type { LayerSample, SpectralSample } from './types';

// Hand-built samples with small exact values: every result below is exact in
// float32, so the comparisons are exact.
describe('reconstruct', () => {
  it('dense: a copy of the values', () => {
    const values = Float32Array.of(1, -2, 3, 4);
    const out = reconstruct({ scheme: 'none', shape: [2, 2], values });
    expect(Array.from(out)).toEqual([1, -2, 3, 4]);
    expect(out).not.toBe(values);
  });

  it('entry-wise: the sparse matrix of kept λ/p', () => {
    const sample: LayerSample = {
      scheme: 'atomo-entry',
      shape: [2, 3],
      indices: Uint32Array.of(0, 4),
      values: Float32Array.of(2.5, -8),
    };
    expect(Array.from(reconstruct(sample))).toEqual([2.5, 0, 0, 0, -8, 0]);
  });

  it('spectral: Σ scaleᵢ uᵢvᵢᵀ', () => {
    const sample: LayerSample = {
      scheme: 'atomo-svd',
      shape: [2, 3],
      count: 2,
      u: Float32Array.of(1, 0, 0, 1),
      v: Float32Array.of(1, 2, 0, 0, 0, 1),
      scales: Float32Array.of(3, -2),
    };
    // 3·[1,0]ᵀ[1,2,0] − 2·[0,1]ᵀ[0,0,1]
    expect(Array.from(reconstruct(sample))).toEqual([3, 6, 0, 0, 0, -2]);
  });

  it('spectral with no atoms: zero', () => {
    const sample: LayerSample = {
      scheme: 'atomo-svd',
      shape: [2, 2],
      count: 0,
      u: new Float32Array(0),
      v: new Float32Array(0),
      scales: new Float32Array(0),
    };
    expect(Array.from(reconstruct(sample))).toEqual([0, 0, 0, 0]);
  });

  it('qsgd: norm · sign · level/s', () => {
    const sample: LayerSample = {
      scheme: 'qsgd',
      shape: [1, 4],
      levels: 4,
      coding: 'fixed',
      bucketSize: 0,
      norms: Float32Array.of(2),
      negative: Uint8Array.of(0, 1, 1, 0),
      level: Uint16Array.of(4, 1, 0, 2),
    };
    expect(Array.from(reconstruct(sample))).toEqual([2, -0.5, -0, 1]);
  });

  it('terngrad: scaler · t', () => {
    const sample: LayerSample = { scheme: 'terngrad', shape: [3, 1], scaler: 1.5, ternary: Int8Array.of(-1, 0, 1) };
    expect(Array.from(reconstruct(sample))).toEqual([-1.5, 0, 1.5]);
  });
});

describe('realisedStats', () => {
  const rows = 37;
  const cols = 11;
  const grad = Float32Array.from(randomMatrix(rows, cols, 1));
  /** count atoms of random float32 u, v, with u zero on rows 3 and 20 (whole zero rows of ĝ). */
  const spectral = (count: number): LayerSample => {
    const u = Float32Array.from(randomMatrix(count, rows, 2 + count));
    for (let a = 0; a < count; a++) u[a * rows + 3] = u[a * rows + 20] = 0;
    if (count > 1) u[rows + 7] = 0; // row 7: only some atoms contribute
    return {
      scheme: 'atomo-svd',
      shape: [rows, cols],
      count,
      u,
      v: Float32Array.from(randomMatrix(count, cols, 9 + count)),
      scales: Float32Array.from(randomMatrix(1, count, 20 + count)),
    };
  };

  it(
    'is exactly realisedError(reconstruct(sample)) and ' +
      'squaredNorm(g) for sums of outer products, streamed row by row',
    () => {
      for (let count = 0; count <= 5; count++) {
        const sample = spectral(count);
        expect(realisedStats(sample, grad)).toEqual({
          realised: realisedError(reconstruct(sample), grad),
          gradientNormSq: squaredNorm(grad),
        });
      }
      const powersgd: LayerSample = {
        scheme: 'powersgd',
        shape: [rows, cols],
        rank: 2,
        p: Float32Array.from(randomMatrix(2, rows, 30)),
        q: Float32Array.from(randomMatrix(2, cols, 31)),
      };
      expect(realisedStats(powersgd, grad)).toEqual({
        realised: realisedError(reconstruct(powersgd), grad),
        gradientNormSq: squaredNorm(grad),
      });
    },
  );

  it('layerStatistics adds ‖g‖₁ exactly as l1Norm sums it, for every kind of sample', () => {
    const entry: LayerSample = {
      scheme: 'atomo-entry',
      shape: [rows, cols],
      indices: Uint32Array.of(0, 5, 400),
      values: Float32Array.of(1, -2, 3),
    };
    const auto: LayerSample = { scheme: 'atomo-auto', shape: [rows, cols], atoms: spectral(3) as SpectralSample };
    for (const sample of [...[0, 1, 2, 4, 5].map(spectral), entry, auto]) {
      expect(layerStatistics(sample, grad)).toEqual({ ...realisedStats(sample, grad), gradientL1: l1Norm(grad) });
    }
  });

  it('is the same for the other schemes too, and checks the length', () => {
    const entry: LayerSample = {
      scheme: 'atomo-entry',
      shape: [rows, cols],
      indices: Uint32Array.of(0, 5, 400),
      values: Float32Array.of(1, -2, 3),
    };
    expect(realisedStats(entry, grad)).toEqual({
      realised: realisedError(reconstruct(entry), grad),
      gradientNormSq: squaredNorm(grad),
    });
    expect(() => realisedStats(spectral(2), grad.subarray(1))).toThrow(RangeError);
  });
});

describe('outerProductsInto, the rows of one or two atoms summed without the row buffer', () => {
  it('gives the bits of rowOfOuterProducts for 1, 2 and 3 atoms, zero left coefficients and a -0 product', () => {
    const [rows, cols] = [7, 5];
    const rng = seededRng(41);
    const draw = (n: number) => Float32Array.from({ length: n }, () => (rng() - 0.5) * 3);
    for (const count of [1, 2, 3]) {
      const u = draw(count * rows);
      const v = draw(count * cols);
      // Row 1 has no atom, row 2 only the last; the first atom's entry (0, 1) is 1 · 1 · -0, a -0 that the sum from +0
      // makes +0.
      for (let a = 0; a < count; a++) u[a * rows + 1] = 0;
      for (let a = 0; a + 1 < count; a++) u[a * rows + 2] = 0;
      u[0] = 1;
      v[1] = -0;
      const scales = draw(count);
      scales[0] = 1;
      for (let a = 1; a < count; a++) v[a * cols + 1] = 0;
      const sample: SpectralSample = { scheme: 'atomo-svd', shape: [rows, cols], count, u, v, scales };
      const products = outerProducts(sample)!;
      const expected = new Float32Array(rows * cols);
      const left = new Float64Array(count);
      const sum = new Float64Array(cols);
      for (let i = 0; i < rows; i++) if (rowOfOuterProducts(products, i, left, sum)) expected.set(sum, i * cols);
      const got = new Float32Array(rows * cols + 3);
      outerProductsInto(products, got, 3);
      const bits = (x: Float32Array) => [...new Uint32Array(x.buffer, x.byteOffset, x.length)];
      expect(bits(got.subarray(3))).toEqual(bits(expected));
      expect(bits(reconstruct(sample))).toEqual(bits(expected));
    }
  });
});
