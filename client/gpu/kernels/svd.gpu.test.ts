import { describe, expect } from 'vitest';
import { lowRankMatrix, matrixWithSingularValues, randomMatrix } from '../../../core/linalg/random-matrix';
import { svdJacobi } from '../../../core/linalg/svd';
import { svdBatched, type SvdMatrix, type SvdMatrixResult } from './svd';
import { fromTriplets, orthonormalityError, relativeFrobeniusError } from '../../../core/testing/spectral';
import { gpuTest } from '../testing/gpuTest';

// ---------------------------------------------------------------- checks (Float64)

/** ‖A − U_k Σ_k V_kᵀ‖_F / ‖A‖_F (0/0 = 0 for the zero matrix). */
function reconstructionError(a: ArrayLike<number>, r: SvdMatrixResult): number {
  return relativeFrobeniusError(fromTriplets(r.u, r.singularValues, r.v, r.rows, r.cols, r.k), a);
}

/** ‖A − U_k Σ_k V_kᵀ‖₂ by power iteration on the residual (Float64). */
function residualSpectralNorm(a: ArrayLike<number>, r: SvdMatrixResult): number {
  const { rows, cols, k, u, v, singularValues } = r;
  const approx = fromTriplets(u, singularValues, v, rows, cols, k);
  const res = Float64Array.from(approx, (value, i) => a[i]! - value);
  let x = Float64Array.from(randomMatrix(cols, 1, 99));
  let sigma = 0;
  for (let it = 0; it < 200; it++) {
    const y = new Float64Array(rows);
    for (let i = 0; i < rows; i++) {
      let sum = 0;
      for (let j = 0; j < cols; j++) sum += res[i * cols + j]! * x[j]!;
      y[i] = sum;
    }
    const z = new Float64Array(cols);
    for (let i = 0; i < rows; i++) {
      const yi = y[i]!;
      for (let j = 0; j < cols; j++) z[j] = z[j]! + res[i * cols + j]! * yi;
    }
    const norm = Math.hypot(...z);
    if (norm === 0) return 0;
    sigma = Math.sqrt(norm);
    x = z.map((value) => value / norm);
  }
  return sigma;
}

interface Expectations {
  /** Orthogonality of U and V on the columns with σ > 0 (default 1e-5). */
  readonly orthogonality?: number;
  /** ‖A − UΣVᵀ‖_F/‖A‖_F (default 1e-5). */
  readonly reconstruction?: number;
  /** |σᵢ − σᵢʳᵉᶠ| ≤ sigma·σ₁ (default 1e-5), for σᵢʳᵉᶠ ≥ sigmaFloor·σ₁ (default 0). */
  readonly sigma?: number;
  readonly sigmaFloor?: number;
}

/** Checks one GPU result against the Float64 CPU reference; returns the measured errors. */
function check(a: Float32Array, rows: number, cols: number, got: SvdMatrixResult, want: Expectations = {}) {
  const ref = svdJacobi(a, rows, cols);
  const sigma1 = ref.singularValues[0]!;
  let sigmaErr = 0;
  for (let t = 0; t < got.k; t++) {
    const refSigma = ref.singularValues[t]!;
    if (refSigma < (want.sigmaFloor ?? 0) * sigma1) continue;
    sigmaErr = Math.max(sigmaErr, Math.abs(got.singularValues[t]! - refSigma));
  }
  for (let t = 1; t < got.k; t++) expect(got.singularValues[t]!).toBeLessThanOrEqual(got.singularValues[t - 1]!);
  const nonZero = got.singularValues.filter((x) => x > 0).length;
  const measured = {
    orthU: orthonormalityError(got.u, rows, nonZero),
    orthV: orthonormalityError(got.v, cols, nonZero),
    reconstruction: reconstructionError(a, got),
    sigma: sigma1 === 0 ? sigmaErr : sigmaErr / sigma1,
  };
  report('measured', measured);
  expect(measured.orthU).toBeLessThanOrEqual(want.orthogonality ?? 1e-5);
  expect(measured.orthV).toBeLessThanOrEqual(want.orthogonality ?? 1e-5);
  expect(measured.reconstruction).toBeLessThanOrEqual(want.reconstruction ?? 1e-5);
  expect(measured.sigma).toBeLessThanOrEqual(want.sigma ?? 1e-5);
  return { ...measured, ref };
}

/** Set SVD_VERBOSE=1 to print measured errors and timings. */
const verbose = process.env.SVD_VERBOSE === '1';
function report(label: string, value: unknown): void {
  if (verbose) console.info(label, value);
}

// What the unrefined Gram route (refine: false) reaches: σᵢ to a relative
// GRAM_SIGMA_REL where σᵢ ≥ 1e-3·σ₁, and U orthogonal to GRAM_ORTH_U on the
// columns with σ ≥ 1e-2·σ₁ (1e-5 only for σ ≥ 1e-1·σ₁). Forming WᵀW in f32
// squares the condition number: cos(uᵢ, uⱼ) ~ ε·σ₁²/(σᵢσⱼ).
const GRAM_SIGMA_REL = 5e-3;
const GRAM_ORTH_U = 5e-3;

const f32 = (a: ArrayLike<number>): Float32Array => Float32Array.from(a);
const geometric = (count: number, ratio: number): number[] => Array.from({ length: count }, (_, i) => ratio ** i);

// ---------------------------------------------------------------- tests

describe('svd/jacobi.wgsl on Dawn: direct route (short side ≤ 32)', () => {
  gpuTest('decomposes MNIST-layer shapes 128×10, 10×128 and 32×288 in one batch', async ({ gpu }) => {
    const shapes: [number, number][] = [
      [128, 10],
      [10, 128],
      [32, 288],
      [288, 32],
      [1, 7],
      [5, 1],
    ];
    const matrices: SvdMatrix[] = shapes.map(([rows, cols], i) => ({
      rows,
      cols,
      data: f32(randomMatrix(rows, cols, 10 + i)),
    }));
    const results = await svdBatched(gpu.device, matrices);
    results.forEach((r, i) => {
      const { rows, cols, data } = matrices[i]!;
      expect(r.route).toBe('jacobi');
      expect(r.converged).toBe(true);
      expect(r.maxCos).toBeLessThanOrEqual(Math.sqrt(Math.max(rows, cols)) * 2 ** -24);
      const { ref, ...errors } = check(data, rows, cols, r);
      expect(r.rank).toBe(ref.rank);
      report(`direct ${rows}×${cols}`, { ...errors, sweeps: r.sweeps, refSweeps: ref.sweeps, maxCos: r.maxCos });
    });
  });
});

/** A = Q₁ diag(σ) Q₂ᵀ as f32, times `scale`. */
function withSpectrum(rows: number, cols: number, sigmas: readonly number[], seed: number, scale = 1): Float32Array {
  return f32(matrixWithSingularValues(rows, cols, sigmas, seed).map((x) => x * scale));
}

describe('svd/jacobi.wgsl on Dawn: spectra on the direct route', () => {
  gpuTest('geometric, clustered, rank-deficient, zero and 1e±30-scaled spectra', async ({ gpu }) => {
    const cases: { name: string; rows: number; cols: number; data: Float32Array; rank?: number }[] = [
      { name: 'geometric', rows: 64, cols: 20, data: withSpectrum(64, 20, geometric(20, 0.5), 1) },
      {
        name: 'clustered',
        rows: 40,
        cols: 24,
        data: withSpectrum(40, 24, [...Array(8).fill(1), ...Array(8).fill(0.5), ...Array(8).fill(1e-3)], 2),
      },
      { name: 'rank 5', rows: 100, cols: 24, data: f32(lowRankMatrix(100, 24, 5, 3)), rank: 5 },
      { name: 'rank 3 wide', rows: 12, cols: 90, data: f32(lowRankMatrix(12, 90, 3, 4)), rank: 3 },
      { name: 'zero', rows: 12, cols: 7, data: new Float32Array(84), rank: 0 },
      { name: '1e30', rows: 50, cols: 16, data: withSpectrum(50, 16, geometric(16, 0.6), 5, 1e30) },
      { name: '1e-30', rows: 16, cols: 50, data: withSpectrum(16, 50, geometric(16, 0.6), 6, 1e-30) },
    ];
    const results = await svdBatched(gpu.device, cases);
    results.forEach((r, i) => {
      const c = cases[i]!;
      expect(r.converged).toBe(true);
      const { ref: _ref, ...errors } = check(c.data, c.rows, c.cols, r);
      if (c.rank !== undefined) expect(r.rank).toBe(c.rank);
      report(`direct ${c.name}`, { ...errors, rank: r.rank, sweeps: r.sweeps });
    });
    const zero = results[4]!;
    expect(Array.from(zero.singularValues)).toEqual(new Array<number>(7).fill(0));
    expect(zero.u.every((x) => x === 0) && zero.v.every((x) => x === 0)).toBe(true);
  });

  gpuTest('agrees with the CPU reference vectors up to sign', async ({ gpu }) => {
    // Well-separated σ, so each singular vector is unique up to sign.
    const rows = 90;
    const cols = 12;
    const data = withSpectrum(rows, cols, geometric(cols, 0.7), 7);
    const [r] = await svdBatched(gpu.device, [{ rows, cols, data }]);
    const ref = svdJacobi(data, rows, cols);
    for (let t = 0; t < cols; t++) {
      let du = 0;
      for (let i = 0; i < rows; i++) du += r!.u[t * rows + i]! * ref.u[i * cols + t]!;
      let dv = 0;
      for (let j = 0; j < cols; j++) dv += r!.v[t * cols + j]! * ref.v[j * cols + t]!;
      expect(1 - Math.abs(du)).toBeLessThan(1e-5);
      expect(1 - Math.abs(dv)).toBeLessThan(1e-5);
    }
  });
});

describe('svd/jacobi.wgsl on Dawn: Gram route (short side > 32)', () => {
  gpuTest('784×128 gradient-like (rank 32), 64×64 random, 96×96 clustered, 40×100 at 1e30', async ({ gpu }) => {
    const cases = [
      { name: '784×128 rank 32', rows: 784, cols: 128, data: f32(lowRankMatrix(784, 128, 32, 8)), rank: 32 },
      { name: '64×64 random', rows: 64, cols: 64, data: f32(randomMatrix(64, 64, 10)) },
      {
        name: '96×96 clustered',
        rows: 96,
        cols: 96,
        data: withSpectrum(96, 96, [...Array(48).fill(1), ...Array(48).fill(0.25)], 11),
      },
      { name: '40×100 ×1e30', rows: 40, cols: 100, data: withSpectrum(40, 100, geometric(40, 0.8), 12, 1e30) },
    ];
    const results = await svdBatched(gpu.device, cases);
    results.forEach((r, i) => {
      const c = cases[i]!;
      expect(r.route).toBe('gram');
      expect(r.converged).toBe(true);
      const { ref: _ref, ...errors } = check(c.data, c.rows, c.cols, r);
      if (c.rank !== undefined) expect(r.rank).toBe(c.rank);
      report(`gram+refine ${c.name}`, { ...errors, rank: r.rank, sweeps: r.sweeps, maxCos: r.maxCos });
    });
  });

  gpuTest('without refinement: σ and U accurate only well above √ε·σ₁', async ({ gpu }) => {
    const rows = 784;
    const cols = 128;
    const data = withSpectrum(rows, cols, geometric(cols, 0.9), 9);
    const [r] = await svdBatched(gpu.device, [{ rows, cols, data }], { refine: false });
    const ref = svdJacobi(data, rows, cols);
    const sigma1 = ref.singularValues[0]!;
    // U from the f32 Gram matrix: cos(uᵢ, uⱼ) ~ ε·σ₁²/(σᵢσⱼ).
    const above = (ratio: number): number => ref.singularValues.filter((x) => x >= ratio * sigma1).length;
    let sigmaAbs = 0;
    let sigmaRel = 0;
    for (let t = 0; t < cols; t++) {
      const d = Math.abs(r!.singularValues[t]! - ref.singularValues[t]!);
      sigmaAbs = Math.max(sigmaAbs, d / sigma1);
      if (t < above(1e-3)) sigmaRel = Math.max(sigmaRel, d / ref.singularValues[t]!);
    }
    const errors = {
      orthV: orthonormalityError(r!.v, cols, cols),
      orthU01: orthonormalityError(r!.u, rows, above(1e-1)),
      orthU001: orthonormalityError(r!.u, rows, above(1e-2)),
      orthU0001: orthonormalityError(r!.u, rows, above(1e-3)),
      reconstruction: reconstructionError(data, r!),
      sigmaAbs,
      sigmaRel,
    };
    report('gram (no refine) 784×128 geometric 0.9^i', { ...errors, sweeps: r!.sweeps });
    expect(errors.orthV).toBeLessThanOrEqual(1e-5);
    expect(errors.reconstruction).toBeLessThanOrEqual(1e-5);
    // Not asserted: sigmaAbs (|σᵢ − σᵢʳᵉᶠ|/σ₁ over all i) reaches ~1e-4 near the noise floor.
    expect(errors.orthU01).toBeLessThanOrEqual(1e-5);
    expect(errors.orthU001).toBeLessThanOrEqual(GRAM_ORTH_U);
    expect(errors.sigmaRel).toBeLessThanOrEqual(GRAM_SIGMA_REL);
  });
});

describe('svd top-k mode on Dawn (randomized subspace iteration)', () => {
  gpuTest('784×128 and 100×600: spectral error within 1.1·σ_{k+1}, warm start', async ({ gpu }) => {
    const k = 8;
    const cases = [
      { rows: 784, cols: 128, data: withSpectrum(784, 128, geometric(128, 0.8), 13) },
      { rows: 100, cols: 600, data: withSpectrum(100, 600, geometric(100, 0.7), 14) },
      { rows: 784, cols: 128, data: f32(lowRankMatrix(784, 128, 5, 15)) },
    ];
    const results = await svdBatched(gpu.device, cases, { rank: k });
    const warm = await svdBatched(gpu.device, cases, { rank: k, powerIterations: 0, warmStart: results, seed: 2 });
    for (const [name, set] of [
      ['cold', results],
      ['warm, no power iteration', warm],
    ] as const) {
      set.forEach((r, i) => {
        const c = cases[i]!;
        expect(r.route).toBe('topk');
        expect(r.k).toBe(k);
        const ref = svdJacobi(c.data, c.rows, c.cols);
        const next = ref.singularValues[k]!;
        const spectral = residualSpectralNorm(c.data, r);
        const nonZero = r.singularValues.filter((x) => x > 0).length;
        let sigma = 0;
        for (let t = 0; t < k; t++)
          sigma = Math.max(sigma, Math.abs(r.singularValues[t]! - ref.singularValues[t]!) / ref.singularValues[0]!);
        const errors = {
          spectralOverNext: next === 0 ? spectral / ref.singularValues[0]! : spectral / next,
          orthU: orthonormalityError(r.u, c.rows, nonZero),
          orthV: orthonormalityError(r.v, c.cols, nonZero),
          sigma,
        };
        report(`topk ${name} ${c.rows}×${c.cols}`, { ...errors, rank: r.rank, sweeps: r.sweeps });
        if (next > 1e-4 * ref.singularValues[0]!) expect(errors.spectralOverNext).toBeLessThanOrEqual(1.1);
        else expect(spectral).toBeLessThanOrEqual(1e-5 * ref.singularValues[0]!); // rank < k: exact up to rounding
        expect(errors.orthU).toBeLessThanOrEqual(1e-5);
        expect(errors.orthV).toBeLessThanOrEqual(1e-5);
        expect(errors.sigma).toBeLessThanOrEqual(1e-3);
      });
    }
  });
});
