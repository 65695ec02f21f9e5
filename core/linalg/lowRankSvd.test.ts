import { describe, expect, it } from 'vitest';
import { svdJacobi } from './svd';
import { svdLowRank } from './lowRankSvd';
import { seededRng } from '../testing/seeded';
import { bothWays } from './testing/shapes';

/** A rows×cols matrix of rank ≤ rank: a sum of `rank` random outer products (like a minibatch gradient Xᵀ·Δ). */
function lowRank(rows: number, cols: number, rank: number, seed: number): Float32Array {
  const rng = seededRng(seed);
  const next = () => 2 * rng() - 1;
  const out = new Float32Array(rows * cols);
  for (let k = 0; k < rank; k++) {
    const x = Float64Array.from({ length: rows }, next);
    const y = Float64Array.from({ length: cols }, next);
    for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) out[i * cols + j]! += x[i]! * y[j]!;
  }
  return out;
}

/** max |(UΣVᵀ − A)ij| / max |Aij|. */
function reconstructionError(
  a: Float32Array,
  rows: number,
  cols: number,
  u: Float64Array,
  s: Float64Array,
  v: Float64Array,
  r: number,
): number {
  let worst = 0;
  let scale = 0;
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      let x = 0;
      for (let t = 0; t < r; t++) x += u[i * r + t]! * s[t]! * v[j * r + t]!;
      worst = Math.max(worst, Math.abs(x - a[i * cols + j]!));
      scale = Math.max(scale, Math.abs(a[i * cols + j]!));
    }
  }
  return worst / scale;
}

describe('svdLowRank', () => {
  it('finds the numerical rank and the singular values of the Jacobi reference', () => {
    const g = lowRank(120, 40, 6, 7);
    const fast = svdLowRank(g, 120, 40);
    const reference = svdJacobi(g, 120, 40);
    expect(fast.rank).toBe(6);
    // σ agree to 1e-9 relative to σ₁: both are Float64 factorisations of the same matrix.
    for (let i = 0; i < 6; i++) {
      expect(
        Math.abs(fast.singularValues[i]! - reference.singularValues[i]!) / reference.singularValues[0]!,
      ).toBeLessThan(1e-9);
    }
    expect(reconstructionError(g, 120, 40, fast.u, fast.singularValues, fast.v, fast.r)).toBeLessThan(1e-6);
  });

  it('factors full-rank, wide and tall matrices exactly, with orthonormal singular vectors', () => {
    for (const [rows, cols] of bothWays([9, 12], [1, 7])) {
      const g = lowRank(rows, cols, Math.min(rows, cols), rows + cols);
      const d = svdLowRank(g, rows, cols);
      expect(d.rank).toBe(Math.min(rows, cols));
      // A float32 input reconstructed in Float64: 1e-6 of the largest entry leaves room for the cut-off.
      expect(reconstructionError(g, rows, cols, d.u, d.singularValues, d.v, d.r)).toBeLessThan(1e-6);
      for (let a = 0; a < d.r; a++) {
        for (let b = 0; b < d.r; b++) {
          let uu = 0;
          let vv = 0;
          for (let i = 0; i < rows; i++) uu += d.u[i * d.r + a]! * d.u[i * d.r + b]!;
          for (let j = 0; j < cols; j++) vv += d.v[j * d.r + a]! * d.v[j * d.r + b]!;
          expect(Math.abs(uu - (a === b ? 1 : 0))).toBeLessThan(1e-10);
          expect(Math.abs(vv - (a === b ? 1 : 0))).toBeLessThan(1e-10);
        }
      }
      for (let t = 1; t < d.r; t++) expect(d.singularValues[t]!).toBeLessThanOrEqual(d.singularValues[t - 1]!);
    }
  });

  it(
    'gives a single row (a bias) the triplet of svdJacobi of R = ' +
      '0 + q·a, q the sign of its first largest entry, to the bit',
    () => {
      const rng = seededRng(11);
      const random = Float32Array.from({ length: 128 }, () => (2 * rng() - 1) * 1e-3);
      const rows: readonly (readonly number[])[] = [
        Array.from(random),
        [0.5, -2, 1, -0, 0, 2], // the first largest is negative, and a later entry as large; −0 and +0 inside
        [3, -3],
        [1e30, -1e-30, 0, 7e29],
        [-1e-30, 2e-30, -2e-30],
        [-4],
      ];
      for (const values of rows) {
        const a = Float32Array.from(values);
        let best = 0;
        for (let j = 1; j < a.length; j++) if (a[j]! * a[j]! > a[best]! * a[best]!) best = j;
        const q = a[best]! > 0 ? 1 : -1;
        const reference = svdJacobi(
          Float64Array.from(a, (x) => 0 + q * x),
          1,
          a.length,
        );
        const row = svdLowRank(a, 1, a.length);
        expect(row.rank).toBe(1);
        expect(row.singularValues).toEqual(reference.singularValues);
        expect(row.v).toEqual(reference.v);
        expect(Array.from(row.u)).toEqual([q]);
        // Object.is, so a −0 where the general path has +0 would fail.
        row.v.forEach((x, j) => expect(Object.is(x, reference.v[j])).toBe(true));
      }
      // Nothing above the threshold: no triplet, as the pivoted QR stops at once (a zero row, or one that is not
      // finite).
      for (const values of [
        [0, -0, 0],
        [1, Number.NaN],
        [Number.POSITIVE_INFINITY, 1],
      ]) {
        expect(svdLowRank(Float64Array.from(values), 1, values.length).rank).toBe(0);
      }
    },
  );

  it('gives rank 0 for the zero matrix and rejects bad shapes', () => {
    expect(svdLowRank(new Float32Array(12), 3, 4).rank).toBe(0);
    expect(() => svdLowRank(new Float32Array(5), 2, 3)).toThrow(RangeError);
  });
});
