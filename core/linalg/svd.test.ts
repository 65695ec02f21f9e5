import { describe, expect, it } from 'vitest';
import { lowRankMatrix, matrixWithSingularValues, randomMatrix } from './random-matrix';
import { symmetricEigen } from './symmetricEigen';
import { orthogonalityError, reconstructionError } from './testing/svdChecks';
import { bothWays } from './testing/shapes';
import { rankTolerance, svdGramJacobi, svdJacobi, type SvdOptions, type SvdResult } from './svd';

// Float64 Jacobi is backward stable: errors are a small multiple of
// max(m, n)·ε ≈ 1e-13 for these sizes. 1e-10 leaves three orders of
// magnitude of slack, while a wrong rotation, a missing transpose or an
// unsorted σ is off by O(1).
const TOL = 1e-10;

function frobenius(a: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! ** 2;
  return Math.sqrt(sum);
}

function expectValidSvd(a: ArrayLike<number>, svd: SvdResult): void {
  expect(svd.converged).toBe(true);
  expect(reconstructionError(a, svd)).toBeLessThan(TOL);
  expect(orthogonalityError(svd.u, svd.rows, svd.r, svd.rank)).toBeLessThan(TOL);
  expect(orthogonalityError(svd.v, svd.cols, svd.r, svd.rank)).toBeLessThan(TOL);
  for (let k = 1; k < svd.r; k++) expect(svd.singularValues[k]!).toBeLessThanOrEqual(svd.singularValues[k - 1]!);
  for (let k = svd.rank; k < svd.r; k++) expect(svd.singularValues[k]).toBe(0);
}

type Svd = (a: Float64Array | Float32Array, rows: number, cols: number, options?: SvdOptions) => SvdResult;

// svdGramJacobi is the same algorithm from another start, so it must pass every test of the reference.
describe.each<{ name: string; svd: Svd }>([
  { name: 'svdJacobi', svd: svdJacobi },
  { name: 'svdGramJacobi', svd: svdGramJacobi },
])('$name', ({ svd: decompose }) => {
  for (const [rows, cols] of bothWays([64, 32], [50, 50], [1, 17], [1, 1], [100, 3])) {
    it(`decomposes a random ${rows}×${cols} matrix`, () => {
      const a = randomMatrix(rows, cols, rows * 1000 + cols);
      const svd = decompose(a, rows, cols);
      expect(svd.r).toBe(Math.min(rows, cols));
      expect(svd.rank).toBe(svd.r); // Gaussian matrices have full rank almost surely
      expectValidSvd(a, svd);
    });
  }

  it('recovers known singular values, including ill-conditioned ones (cond 1e12)', () => {
    const sigmas = [1e3, 10, 1, 0.1, 1e-3, 1e-6, 1e-9];
    for (const [rows, cols] of bothWays([40, 7])) {
      const a = matrixWithSingularValues(rows, cols, sigmas, 3);
      const svd = decompose(a, rows, cols);
      expectValidSvd(a, svd);
      // Forming A rounds each entry by ~ε·σ₀, so the small σ are known only to
      // an absolute ~1e-13·σ₀; 1e-10·σ₀ leaves slack and still catches a
      // misplaced or missing σ.
      for (let k = 0; k < sigmas.length; k++) {
        expect(Math.abs(svd.singularValues[k]! - sigmas[k]!)).toBeLessThan(TOL * sigmas[0]!);
      }
    }
  });

  it('finds the rank of rank-deficient matrices, with zero tails', () => {
    for (const [rows, cols, rank] of [
      [64, 32, 5],
      [32, 64, 5],
      [30, 30, 1],
    ] as const) {
      const a = lowRankMatrix(rows, cols, rank, 11);
      const svd = decompose(a, rows, cols);
      expect(svd.rank).toBe(rank);
      expectValidSvd(a, svd);
    }
  });

  it('handles the zero matrix: rank 0, σ = 0, U = V = 0', () => {
    for (const [rows, cols] of bothWays([5, 3])) {
      const svd = decompose(new Float32Array(rows * cols), rows, cols);
      expect(svd.rank).toBe(0);
      expect(svd.sweeps).toBe(1);
      expect(Array.from(svd.singularValues)).toEqual(new Array<number>(svd.r).fill(0));
      expect(frobenius(svd.u)).toBe(0);
      expect(frobenius(svd.v)).toBe(0);
    }
  });

  it('sorts σ of a diagonal matrix with repeated values', () => {
    // diag(1, 3, 0, 3, 2) padded with a zero row: σ = 3, 3, 2, 1, 0.
    const diag = [1, 3, 0, 3, 2];
    const a = new Float64Array(6 * 5);
    diag.forEach((d, i) => (a[i * 5 + i] = d));
    const svd = decompose(a, 6, 5);
    expect(Array.from(svd.singularValues)).toEqual([3, 3, 2, 1, 0]);
    expect(svd.rank).toBe(4);
    expectValidSvd(a, svd);
  });

  it('is scale invariant: the same sweeps at 1e-150 and 1e150 (relative stopping rule)', () => {
    const a = randomMatrix(20, 12, 5);
    const reference = decompose(a, 20, 12);
    for (const scale of [1e-150, 1e150]) {
      const scaled = a.map((x) => x * scale);
      const svd = decompose(scaled, 20, 12);
      expect(svd.sweeps).toBe(reference.sweeps);
      for (let k = 0; k < 12; k++) {
        expect(svd.singularValues[k]! / scale).toBeCloseTo(reference.singularValues[k]!, 12);
      }
      expectValidSvd(scaled, svd);
    }
  });

  it('accepts Float32 input and decomposes its exact values', () => {
    const a = Float32Array.from(randomMatrix(24, 10, 9));
    expectValidSvd(a, decompose(a, 24, 10));
  });

  it('converges on 784×128 (an MLP layer) in under 20 sweeps', () => {
    // Its speed is a benchmark's business (npm run bench -- compress times the full Jacobi SVD).
    const a = randomMatrix(784, 128, 1);
    const svd = decompose(a, 784, 128);
    expect(svd.converged).toBe(true);
    expect(svd.sweeps).toBeLessThan(20);
    expectValidSvd(a, svd);
  });

  it(
    'returns arrays of its own: a later call, of another size, ' +
      'leaves an earlier result as it was (its temporaries are reused)',
    () => {
      const first = decompose(randomMatrix(40, 12, 5), 40, 12);
      const copy = { u: first.u.slice(), v: first.v.slice(), singularValues: first.singularValues.slice() };
      decompose(randomMatrix(12, 40, 6), 12, 40);
      decompose(randomMatrix(90, 30, 7), 90, 30);
      expect({ u: first.u, v: first.v, singularValues: first.singularValues }).toEqual(copy);
    },
  );

  it('rejects bad shapes and non-finite entries', () => {
    expect(() => decompose(new Float64Array(5), 2, 3)).toThrow(RangeError);
    expect(() => decompose(new Float64Array(0), 0, 3)).toThrow(RangeError);
    expect(() => decompose(Float64Array.of(1, Number.NaN), 1, 2)).toThrow(RangeError);
  });

  it('rankTolerance is max(m, n)·ε·σ₀', () => {
    expect(rankTolerance(10, 4, 2)).toBe(10 * Number.EPSILON * 2);
  });
});

describe('negligibleNorm', () => {
  // σ from 1 down to 2.5e-19 in steps of 10^0.6: ten above the floor 1e-6·‖A‖_F, 22 below it, most of them
  // rounding noise.
  const sigmas = Array.from({ length: 32 }, (_, k) => 10 ** (-0.6 * k));
  const a = matrixWithSingularValues(32, 32, sigmas, 11);
  const floor = 1e-6 * frobenius(a);
  const tolerance = 1e-11;
  const kept = sigmas.filter((sigma) => sigma > floor).length;

  it('keeps σ above the floor, their vectors and the rest’s Σσ² as the full rule does, in fewer sweeps', () => {
    const full = svdGramJacobi(a, 32, 32, { tolerance });
    const floored = svdGramJacobi(a, 32, 32, { tolerance, negligibleNorm: floor });
    expect(kept).toBe(10);
    expect(floored.converged).toBe(true);
    expect(floored.sweeps).toBeLessThan(full.sweeps);
    // Kept triplets: the rule for pairs of long columns is unchanged, so they agree to what the stopping rule leaves
    // (σ to ~n·tolerance relative: 3.2e-10; the coarser start of SymmetricEigenOptions.noiseLevel moves the
    // smallest kept σ, 4e-6·σ₀, by 3e-12 relative).
    for (let k = 0; k < kept; k++) {
      expect(Math.abs(floored.singularValues[k]! - full.singularValues[k]!)).toBeLessThan(
        32 * tolerance * full.singularValues[k]!,
      );
      let uDot = 0;
      let vDot = 0;
      for (let i = 0; i < 32; i++) {
        uDot += floored.u[i * 32 + k]! * full.u[i * 32 + k]!;
        vDot += floored.v[i * 32 + k]! * full.v[i * 32 + k]!;
      }
      expect(Math.abs(Math.abs(uDot) - 1)).toBeLessThan(TOL);
      expect(Math.abs(uDot - vDot)).toBeLessThan(TOL); // the same sign on both sides
    }
    // The kept vectors are orthonormal (the columns after them are not: nobody reads them).
    for (const x of [floored.u, floored.v]) {
      for (let p = 0; p < kept; p++) {
        for (let q = 0; q < kept; q++) {
          let dot = 0;
          for (let i = 0; i < 32; i++) dot += x[i * 32 + p]! * x[i * 32 + q]!;
          expect(Math.abs(dot - (p === q ? 1 : 0))).toBeLessThan(TOL);
        }
      }
    }
    // The rest: the same Σσ² (rotations keep the trace), and no σ above the floor hidden in it.
    let restFull = 0;
    let restFloored = 0;
    for (let k = kept; k < 32; k++) {
      restFull += full.singularValues[k]! ** 2;
      restFloored += floored.singularValues[k]! ** 2;
      expect(floored.singularValues[k]!).toBeLessThanOrEqual(floor * (1 + 32 * tolerance));
    }
    expect(Math.abs(restFloored - restFull)).toBeLessThan(1e-9 * restFull);
  });

  it('changes nothing at 0', () => {
    expect(svdGramJacobi(a, 32, 32, { tolerance, negligibleNorm: 0 })).toEqual(svdGramJacobi(a, 32, 32, { tolerance }));
  });
});

describe('svdGramJacobi against svdJacobi', () => {
  it('gives the same σ, and needs fewer sweeps from the Gram eigenvectors than from the identity', () => {
    const shapes: readonly (readonly [number, number, number])[] = [
      [32, 32, 1],
      [40, 12, 2],
      [12, 40, 3],
    ];
    for (const [rows, cols, seed] of shapes) {
      const a = randomMatrix(rows, cols, seed);
      const reference = svdJacobi(a, rows, cols);
      const fast = svdGramJacobi(a, rows, cols);
      for (let k = 0; k < reference.r; k++) {
        expect(Math.abs(fast.singularValues[k]! - reference.singularValues[k]!)).toBeLessThan(
          1e-13 * reference.singularValues[0]!,
        );
      }
      expect(fast.sweeps).toBeLessThan(reference.sweeps);
    }
  });

  it('keeps σ down to 1e-6·σ₀ (the factored route’s cut-off) to 1e-8 relative, as the Gram alone cannot', () => {
    // The Gram's eigenvalues are known to ~1e-16·σ₀² absolute, so σ = 1e-6·σ₀ (eigenvalue 1e-12·σ₀²)
    // only to ~1e-4 relative; Jacobi on W·V₀ itself resolves it as the reference does.
    const sigmas = [1, 0.3, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6];
    const a = matrixWithSingularValues(30, 7, sigmas, 5);
    const reference = svdJacobi(a, 30, 7);
    const fast = svdGramJacobi(a, 30, 7);
    for (let k = 0; k < sigmas.length; k++) {
      expect(Math.abs(fast.singularValues[k]! - reference.singularValues[k]!)).toBeLessThan(
        1e-8 * reference.singularValues[k]!,
      );
    }
    // The Gram's own eigenvalues would not do: √λ of the smallest is off by far more than 1e-8.
    const gram = new Float64Array(7 * 7);
    for (let p = 0; p < 7; p++)
      for (let q = 0; q < 7; q++) for (let i = 0; i < 30; i++) gram[p * 7 + q]! += a[i * 7 + p]! * a[i * 7 + q]!;
    const smallest = Math.sqrt(Math.max(0, symmetricEigen(gram, 7).values[6]!));
    expect(Math.abs(smallest - reference.singularValues[6]!)).toBeGreaterThan(1e-6 * reference.singularValues[6]!);
  });
});
