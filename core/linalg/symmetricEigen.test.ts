/**
 * symmetricEigen against its definition (A v = λ v, V orthogonal, λ
 * descending) and against svdJacobi (the eigenvalues of MᵀM are σ(M)²), on
 * random, structured and badly scaled matrices. Householder and QL are
 * backward stable: residuals are a small multiple of n·ε·‖A‖, so 1e-12·‖A‖
 * leaves two orders of magnitude of slack and still catches a wrong
 * rotation or a lost vector.
 */
import { describe, expect, it } from 'vitest';
import { matrixWithSingularValues, randomMatrix } from './random-matrix';
import { svdJacobi } from './svd';
import { symmetricEigen, type SymmetricEigenOptions } from './symmetricEigen';

/** max |A v − λ v| and max |VᵀV − I|, and ‖A‖_max. */
function check(a: Float64Array, n: number, options: SymmetricEigenOptions = {}) {
  const { values, vectors, converged } = symmetricEigen(a, n, options);
  expect(converged).toBe(true);
  let scale = 0;
  for (const x of a) scale = Math.max(scale, Math.abs(x));
  let residual = 0;
  let orthogonality = 0;
  for (let k = 0; k < n; k++) {
    for (let i = 0; i < n; i++) {
      let s = 0;
      for (let j = 0; j < n; j++) s += a[i * n + j]! * vectors[k * n + j]!;
      residual = Math.max(residual, Math.abs(s - values[k]! * vectors[k * n + i]!));
    }
    for (let l = 0; l < n; l++) {
      let dot = 0;
      for (let i = 0; i < n; i++) dot += vectors[k * n + i]! * vectors[l * n + i]!;
      orthogonality = Math.max(orthogonality, Math.abs(dot - (k === l ? 1 : 0)));
    }
  }
  for (let k = 1; k < n; k++) expect(values[k]!).toBeLessThanOrEqual(values[k - 1]!);
  expect(residual).toBeLessThanOrEqual(1e-12 * Math.max(scale, Number.MIN_VALUE));
  expect(orthogonality).toBeLessThan(1e-12);
  return values;
}

function symmetric(n: number, seed: number): Float64Array {
  const b = randomMatrix(n, n, seed);
  const a = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) a[i * n + j] = b[i * n + j]! + b[j * n + i]!;
  return a;
}

describe('symmetricEigen', () => {
  for (const n of [1, 2, 3, 7, 32, 65]) {
    it(`diagonalises a random symmetric ${n}×${n} matrix`, () => {
      check(symmetric(n, n), n);
    });
  }

  it('returns arrays of its own: a later call leaves an earlier result as it was (its temporaries are reused)', () => {
    const first = symmetricEigen(symmetric(9, 4), 9);
    const copy = { values: first.values.slice(), vectors: first.vectors.slice() };
    symmetricEigen(symmetric(20, 5), 20);
    expect({ values: first.values, vectors: first.vectors }).toEqual(copy);
  });

  it('gives σ² of M for the Gram MᵀM (against svdJacobi)', () => {
    const m = randomMatrix(40, 12, 3);
    const gram = new Float64Array(12 * 12);
    for (let p = 0; p < 12; p++)
      for (let q = 0; q < 12; q++) for (let i = 0; i < 40; i++) gram[p * 12 + q]! += m[i * 12 + p]! * m[i * 12 + q]!;
    const values = check(gram, 12);
    const sigma = svdJacobi(m, 40, 12).singularValues;
    for (let k = 0; k < 12; k++) expect(Math.abs(values[k]! - sigma[k]! ** 2)).toBeLessThan(1e-12 * sigma[0]! ** 2);
  });

  it('handles repeated eigenvalues, an already diagonal matrix, and zero', () => {
    const n = 6;
    const diagonal = new Float64Array(n * n);
    [2, -1, 2, 0, 5, 2].forEach((d, i) => (diagonal[i * n + i] = d));
    expect(Array.from(check(diagonal, n))).toEqual([5, 2, 2, 2, 0, -1]);
    expect(Array.from(check(new Float64Array(n * n), n))).toEqual(new Array<number>(n).fill(0));
    // I + 11ᵀ: one eigenvalue n + 1, the rest 1 (a cluster of n − 1).
    const ones = Float64Array.from({ length: n * n }, (_, k) => (k % (n + 1) === 0 ? 2 : 1));
    const values = check(ones, n);
    expect(values[0]).toBeCloseTo(n + 1, 12);
    for (let k = 1; k < n; k++) expect(values[k]).toBeCloseTo(1, 12);
  });

  it('is scale invariant from 1e-150 to 1e150', () => {
    const a = symmetric(10, 4);
    const reference = symmetricEigen(a, 10).values;
    for (const scale of [1e-150, 1e150]) {
      const values = check(
        a.map((x) => x * scale),
        10,
      );
      for (let k = 0; k < 10; k++) expect(values[k]! / scale).toBeCloseTo(reference[k]!, 12);
    }
  });

  it('keeps a Gram graded down to rounding noise to ε·‖A‖ with noiseLevel ε, and changes nothing at 0', () => {
    // MᵀM for σ(M) from 1 down to 2.5e-19 (steps of 10^0.6): eigenvalues from 1 to 6e-38, most far below ε·λ₀.
    // The relative test alone runs out of QL steps on this one (converged false: svdGramJacobi would start from the
    // identity); with noiseLevel ε the noise is not resolved to its own scale.
    const sigmas = Array.from({ length: 32 }, (_, k) => 10 ** (-0.6 * k));
    const m = matrixWithSingularValues(32, 32, sigmas, 11);
    const gram = new Float64Array(32 * 32);
    for (let p = 0; p < 32; p++)
      for (let q = 0; q < 32; q++) for (let i = 0; i < 32; i++) gram[p * 32 + q]! += m[i * 32 + p]! * m[i * 32 + q]!;
    // check: converged, A v = λ v to 1e-12·‖A‖ and V orthogonal to 1e-12.
    const values = check(gram, 32, { noiseLevel: Number.EPSILON });
    // λ = σ² to a few ε·λ₀ absolute, what the Gram knows of them (1e-14 leaves slack; a coupling taken as zero
    // that was not negligible moves an eigenvalue by far more).
    for (let k = 0; k < 32; k++) expect(Math.abs(values[k]! - sigmas[k]! ** 2)).toBeLessThan(1e-14);
    const random = symmetric(32, 6);
    expect(symmetricEigen(random, 32, { noiseLevel: 0 })).toEqual(symmetricEigen(random, 32));
  });

  it('rejects bad sizes and non-finite entries', () => {
    expect(() => symmetricEigen(new Float64Array(5), 2)).toThrow(RangeError);
    expect(() => symmetricEigen(new Float64Array(0), 0)).toThrow(RangeError);
    expect(() => symmetricEigen(Float64Array.of(1, 0, Number.NaN, 1), 2)).toThrow(RangeError);
  });
});
