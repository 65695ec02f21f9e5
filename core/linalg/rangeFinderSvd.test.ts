/**
 * The range-finder SVD against the reference (svdJacobi): the same σ and an
 * exact decomposition whether the sketch starts warm, cold or wrong, and no
 * answer rather than an approximate one when G's range needs the full size.
 */
import { describe, expect, it } from 'vitest';
import { LOW_RANK_RELATIVE_TOLERANCE } from './lowRankSvd';
import { lowRankMatrix, matrixWithSingularValues, randomMatrix } from './random-matrix';
import { RANGE_FINDER_OVERSAMPLING, svdRangeFinder } from './rangeFinderSvd';
import { svdJacobi, type SvdResult } from './svd';
import { orthogonalityError, reconstructionError } from './testing/svdChecks';

function expectSameAsReference(
  a: Float64Array,
  rows: number,
  cols: number,
  { svd, residual }: { svd: SvdResult; residual: number },
): void {
  const reference = svdJacobi(a, rows, cols);
  const norm = Math.sqrt(reference.singularValues.reduce((s, x) => s + x * x, 0));
  const expectedRank = reference.singularValues.filter((s) => s > LOW_RANK_RELATIVE_TOLERANCE * norm).length;
  expect(svd.rank).toBe(expectedRank);
  expect(residual).toBeLessThanOrEqual(LOW_RANK_RELATIVE_TOLERANCE * norm);
  // σ of Q·B: below G's by at most residual²/(2σ) (AᵀA = BᵀB + RᵀR), plus rounding.
  for (let k = 0; k < svd.rank; k++) {
    const sigma = reference.singularValues[k]!;
    expect(Math.abs(svd.singularValues[k]! - sigma)).toBeLessThanOrEqual(
      1e-10 * sigma + residual ** 2 / (2 * svd.singularValues[k]!),
    );
  }
  expect(orthogonalityError(svd.u, rows, svd.r, svd.rank)).toBeLessThan(1e-10);
  expect(orthogonalityError(svd.v, cols, svd.r, svd.rank)).toBeLessThan(1e-10);
  // U Σ Vᵀ rebuilds A but for what lies outside the sketch (the residual) and the directions cut off (each below
  // 1e-6·‖A‖_F), as on every route.
  const dropped = Math.sqrt(reference.singularValues.slice(svd.rank).reduce((s, x) => s + x * x, 0));
  expect(reconstructionError(a, svd)).toBeLessThanOrEqual((dropped + residual + 1e-10 * norm) / norm);
}

describe('svdRangeFinder', () => {
  it('warm-started from last round’s subspace, captures the range at the first sketch', () => {
    // A rank-6 "gradient" L·R and a next round L·(R + 10⁻³R′) that moved a little: last round's V is nearly this
    // round's.
    const left = randomMatrix(90, 6, 1);
    const right = randomMatrix(6, 60, 2);
    const moved = randomMatrix(6, 60, 3);
    const product = (r: Float64Array) =>
      Float64Array.from({ length: 90 * 60 }, (_, k) => {
        let s = 0;
        for (let p = 0; p < 6; p++) s += left[Math.floor(k / 60) * 6 + p]! * r[p * 60 + (k % 60)]!;
        return s;
      });
    const before = product(right);
    const after = product(right.map((x, k) => x + 1e-3 * moved[k]!));
    const first = svdRangeFinder(before, 90, 60)!;
    expect(first.svd.rank).toBe(6);
    const second = svdRangeFinder(after, 90, 60, first.subspace)!;
    expect(second.sketch).toBe(6 + RANGE_FINDER_OVERSAMPLING);
    expectSameAsReference(after, 90, 60, second);
  });

  it('cold or from a useless start, doubles its sketch until nothing is left outside it', () => {
    const a = lowRankMatrix(80, 50, 11, 3);
    const cold = svdRangeFinder(a, 80, 50)!;
    expect(cold.sketch).toBeGreaterThanOrEqual(11);
    expectSameAsReference(a, 80, 50, cold);
    // A start orthogonal to everything that matters (the subspace of another matrix) must not be trusted.
    const other = svdRangeFinder(lowRankMatrix(80, 50, 3, 4), 80, 50)!;
    expectSameAsReference(a, 80, 50, svdRangeFinder(a, 80, 50, other.subspace)!);
  });

  it('keeps small singular values down to the cut-off, and a wide matrix too', () => {
    const sigmas = [5, 1, 1e-2, 1e-4, 3e-6];
    const tall = matrixWithSingularValues(70, 40, sigmas, 5);
    expectSameAsReference(tall, 70, 40, svdRangeFinder(tall, 70, 40)!);
    const wide = matrixWithSingularValues(30, 90, sigmas, 6);
    expectSameAsReference(wide, 30, 90, svdRangeFinder(wide, 30, 90)!);
  });

  it('gives no answer (the direct route is no dearer) when the range needs min(rows, cols) columns', () => {
    expect(svdRangeFinder(randomMatrix(16, 200, 7), 16, 200)).toBeNull();
    const full = randomMatrix(40, 30, 8);
    expect(svdRangeFinder(full, 40, 30, svdJacobi(full, 40, 30).v.subarray(0, 30 * 20))).toBeNull();
  });

  it('handles zero, and refuses bad input', () => {
    const zero = svdRangeFinder(new Float64Array(12), 3, 4)!;
    expect(zero.svd.rank).toBe(0);
    expect(() => svdRangeFinder(new Float64Array(5), 2, 3)).toThrow(RangeError);
    expect(() => svdRangeFinder(Float64Array.of(1, Number.NaN), 1, 2)).toThrow(RangeError);
    expect(() => svdRangeFinder(new Float64Array(6), 2, 3, new Float64Array(4))).toThrow(RangeError);
  });
});
