/**
 * PowerSGD is biased by design, so it is tested by its own contract rather
 * than for unbiasedness: it is the paper's algorithm step by step, its error
 * falls with the rank and with warm-started rounds, and its error-feedback
 * memory stays bounded.
 */
import { describe, expect, it } from 'vitest';
import { gaussiansFrom, randomMatrix } from '../../linalg/random-matrix';
import { svdLowRank } from '../../linalg/lowRankSvd';
import type { StreamId } from '../../rng';
import { compressLayer } from '../errorFeedback';
import { reconstruct } from '../reconstruct';
import { randomGradient } from '../testing/gradients';
import type { PowerSgdSample, Shape } from '../types';
import { realisedError, squaredNorm } from '../variance';
import { powerSgdScheme } from './powersgd';
import type { LayerMemory } from './scheme';

const streamOf = (round: number): StreamId => ({ seed: 7, worker: 1, round, layer: 0 });

type Matrix = number[][];

/** The reference steps, written from Algorithm 1 of Vogels et al. (2019) for one worker, in plain float64 arrays. */
const reference = {
  multiply(a: Matrix, b: Matrix): Matrix {
    return a.map((row) => b[0]!.map((_, j) => row.reduce((sum, x, k) => sum + x * b[k]![j]!, 0)));
  },
  transpose(a: Matrix): Matrix {
    return a[0]!.map((_, j) => a.map((row) => row[j]!));
  },
  /** Gram–Schmidt on the columns: subtract the projections on the earlier columns, normalise. */
  orthogonalise(p: Matrix): Matrix {
    const columns = reference.transpose(p);
    const done: number[][] = [];
    for (const column of columns) {
      const c = column.slice();
      for (const q of done) {
        const dot = q.reduce((s, x, i) => s + x * c[i]!, 0);
        for (let i = 0; i < c.length; i++) c[i]! -= dot * q[i]!;
      }
      const norm = Math.sqrt(c.reduce((s, x) => s + x * x, 0));
      done.push(c.map((x) => x / norm));
    }
    return reference.transpose(done);
  },
  /** One round: M = G + e; P = MQ; P̂ = orth(P); Q = MᵀP̂; e = M − P̂Qᵀ. */
  step(g: Matrix, error: Matrix, q: Matrix): { p: Matrix; q: Matrix; error: Matrix; estimate: Matrix } {
    const m = g.map((row, i) => row.map((x, j) => x + error[i]![j]!));
    const p = reference.orthogonalise(reference.multiply(m, q));
    const next = reference.multiply(reference.transpose(m), p);
    const estimate = reference.multiply(p, reference.transpose(next));
    return { p, q: next, estimate, error: m.map((row, i) => row.map((x, j) => x - estimate[i]![j]!)) };
  },
};

const toMatrix = (flat: ArrayLike<number>, rows: number, cols: number): Matrix =>
  Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => flat[i * cols + j]!));
/** Column-major (column a at [a·n, (a+1)·n)) → n×k matrix. */
const fromColumns = (flat: ArrayLike<number>, n: number, k: number): Matrix =>
  Array.from({ length: n }, (_, i) => Array.from({ length: k }, (_, a) => flat[a * n + i]!));
const maxDiff = (a: Matrix, b: Matrix) =>
  Math.max(...a.flatMap((row, i) => row.map((x, j) => Math.abs(x - b[i]![j]!))));
const maxAbs = (a: Matrix) => Math.max(...a.flat().map(Math.abs));

describe('PowerSGD', () => {
  it('equals the reference algorithm step by step: P̂, Q, the estimate and the error memory, over 6 rounds', () => {
    const [rows, cols, rank] = [7, 5, 2];
    const shape: Shape = [rows, cols];
    const memory: LayerMemory = {};
    // The cold start both sides share: i.i.d. normal, entry (j, a) = draw a·cols + j of round 0's stream.
    let refQ = fromColumns(gaussiansFrom(streamOf(0), rank * cols), cols, rank);
    let refError = toMatrix(new Float64Array(rows * cols), rows, cols);
    for (let round = 0; round < 6; round++) {
      const g = Float32Array.from(randomMatrix(rows, cols, 40 + round));
      const ref = reference.step(toMatrix(g, rows, cols), refError, refQ);
      const { sample } = compressLayer('powersgd', g, shape, { budget: rank, memory }, streamOf(round));
      const s = sample as PowerSgdSample;
      // The factors travel as float32 (2⁻²⁴ relative); the error memory is M minus the float32 estimate,
      // so rounding enters each round's memory and is carried forward: 1e-5 of the largest value allows
      // for that over 6 rounds while a wrong step (no warm start, no memory, no orthogonalisation) is off by O(1).
      const tolerance = 1e-5 * maxAbs(ref.q);
      expect(s.rank).toBe(rank);
      expect(maxDiff(fromColumns(s.p, rows, rank), ref.p)).toBeLessThan(1e-5);
      expect(maxDiff(fromColumns(s.q, cols, rank), ref.q)).toBeLessThan(tolerance);
      expect(maxDiff(toMatrix(reconstruct(s), rows, cols), ref.estimate)).toBeLessThan(tolerance);
      expect(maxDiff(toMatrix(memory.error!, rows, cols), ref.error)).toBeLessThan(tolerance);
      expect(maxDiff(fromColumns(memory.q!, cols, rank), ref.q)).toBeLessThan(tolerance);
      refQ = ref.q;
      refError = ref.error;
    }
  });

  it('has a reconstruction error that does not increase with the rank, and is exact at rank min(rows, cols)', () => {
    const { grad, shape } = randomGradient();
    const errors: number[] = [];
    for (let rank = 1; rank <= 32; rank++) {
      // Cold start: the rank-r start is the first r columns of the rank-(r+1) one, so the subspaces nest.
      const { sample, variance } = powerSgdScheme.compress(grad, shape, { budget: rank }, streamOf(0));
      expect(variance).toBe(realisedError(reconstruct(sample), grad));
      errors.push(variance);
    }
    const norm = squaredNorm(grad);
    for (let r = 1; r < errors.length; r++) expect(errors[r]!).toBeLessThanOrEqual(errors[r - 1]! + 1e-9 * norm);
    expect(errors[0]!).toBeGreaterThan(0.1 * norm);
    // Rank 32 = min(64, 32): P̂ spans the whole column space; only float32 rounding of the factors is left.
    expect(errors[31]!).toBeLessThan(1e-10 * norm);
    // Ranks above min(rows, cols) send min(rows, cols) columns.
    expect((powerSgdScheme.compress(grad, shape, { budget: 40 }, streamOf(0)).sample as PowerSgdSample).rank).toBe(32);
  });

  it('converges over warm-started rounds to the best rank-r error, Σ_{i>r} σᵢ², on a fixed gradient', () => {
    const { grad, shape } = randomGradient();
    const svd = svdLowRank(grad, shape[0], shape[1]);
    const rank = 2;
    let optimal = 0;
    for (let i = rank; i < svd.rank; i++) optimal += svd.singularValues[i]! ** 2;
    const memory: LayerMemory = {};
    const errors: number[] = [];
    for (let round = 0; round < 40; round++)
      errors.push(powerSgdScheme.compress(grad, shape, { budget: rank, memory }, streamOf(round)).variance);
    // The two spikes of this gradient make σ₁, σ₂ stand well apart from σ₃, so 40 power steps converge
    // far below 1e-3 of the optimum (float32 factors add ~1e-7 relative); the cold first step is far worse.
    expect(errors[0]!).toBeGreaterThan(1.01 * optimal);
    expect(Math.abs(errors.at(-1)! - optimal)).toBeLessThan(1e-3 * optimal);
  });

  it('keeps its error-feedback memory bounded over 400 rounds, and Σĝ + e = Σg (nothing is lost)', () => {
    const [rows, cols] = [16, 12];
    const memory: LayerMemory = {};
    const sumG = new Float64Array(rows * cols);
    const sumEstimate = new Float64Array(rows * cols);
    const errorNorms: number[] = [];
    let largestGradient = 0;
    for (let round = 0; round < 400; round++) {
      const g = Float32Array.from(randomMatrix(rows, cols, 1000 + round));
      const before = memory.error
        ? Math.sqrt(squaredNorm(g.map((x, i) => x + memory.error![i]!)))
        : Math.sqrt(squaredNorm(g));
      const { sample } = compressLayer('powersgd', g, [rows, cols], { budget: 1, memory }, streamOf(round));
      const estimate = reconstruct(sample);
      for (let i = 0; i < g.length; i++) {
        sumG[i]! += g[i]!;
        sumEstimate[i]! += estimate[i]!;
      }
      const after = Math.sqrt(squaredNorm(memory.error!));
      // ĝ = P̂P̂ᵀM is an orthogonal projection of M, so e = M − ĝ is never longer than M (float32 aside).
      expect(after).toBeLessThanOrEqual(before * (1 + 1e-6));
      errorNorms.push(after);
      largestGradient = Math.max(largestGradient, Math.sqrt(squaredNorm(g)));
    }
    // Telescoping: Σₜ ĝₜ = Σₜ gₜ − e_T, to the float32 rounding of each round's estimate.
    const lost = sumG.map((x, i) => x - sumEstimate[i]! - memory.error![i]!);
    expect(Math.max(...lost.map(Math.abs))).toBeLessThan(1e-4);
    // Bounded: an accumulating memory (e ← M, nothing subtracted) grows like the number of rounds, a
    // random walk like its square root (×1.4 from the first half to the second); a bounded one does
    // not grow: the second half's largest ‖e‖ stays within 1.2× of the first half's, and below 10·max‖g‖.
    const firstHalf = Math.max(...errorNorms.slice(0, 200));
    const secondHalf = Math.max(...errorNorms.slice(200));
    expect(secondHalf).toBeLessThan(1.2 * firstHalf);
    expect(secondHalf).toBeLessThan(10 * largestGradient);
  });

  it('sends zeros for a zero gradient and recovers on the next round (no NaN, no stuck zero warm start)', () => {
    const shape: Shape = [6, 4];
    const memory: LayerMemory = {};
    const zero = powerSgdScheme.compress(new Float32Array(24), shape, { budget: 2, memory }, streamOf(0));
    expect(Array.from(reconstruct(zero.sample))).toEqual(new Array(24).fill(0));
    expect(zero.variance).toBe(0);
    const g = Float32Array.from(randomMatrix(6, 4, 5));
    const next = powerSgdScheme.compress(g, shape, { budget: 2, memory }, streamOf(1));
    expect(next.variance).toBeLessThan(0.9 * squaredNorm(g));
  });

  it('refuses a rank that is not an integer ≥ 1', () => {
    const { grad, shape } = randomGradient();
    for (const budget of [0, 1.5, -1, Number.NaN])
      expect(() => powerSgdScheme.compress(grad, shape, { budget }, streamOf(0))).toThrow(RangeError);
  });
});
