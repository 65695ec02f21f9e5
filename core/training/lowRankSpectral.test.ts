import { describe, expect, it } from 'vitest';
import { reconstruct, spectralDecomposition } from '../atomo';
import { lowRankSpectralDecomposition, lowRankSvdScheme } from './lowRankSpectral';

/** A rows×cols matrix of rank ≤ rank: a sum of `rank` random outer products (like a minibatch gradient Xᵀ·Δ). */
function lowRank(rows: number, cols: number, rank: number, seed: number): Float32Array {
  let state = seed;
  const next = () => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 31) - 1;
  const out = new Float32Array(rows * cols);
  for (let k = 0; k < rank; k++) {
    const x = Float64Array.from({ length: rows }, next);
    const y = Float64Array.from({ length: cols }, next);
    for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) out[i * cols + j]! += x[i]! * y[j]!;
  }
  return out;
}

describe('lowRankSpectralDecomposition', () => {
  it('finds the numerical rank and the reference singular values', () => {
    const g = lowRank(120, 40, 6, 7);
    const fast = lowRankSpectralDecomposition(g, [120, 40]);
    const reference = spectralDecomposition(g, [120, 40]);
    expect(fast.coefficients.length).toBe(6);
    for (let i = 0; i < 6; i++) expect(fast.coefficients[i]! / reference.coefficients[0]!).toBeCloseTo(reference.coefficients[i]! / reference.coefficients[0]!, 9);
  });

  it('reconstructs a full-rank matrix from all its atoms', () => {
    const g = lowRank(9, 12, 12, 3);
    const d = lowRankSpectralDecomposition(g, [9, 12]);
    const all = Uint32Array.from(d.coefficients.keys());
    const back = reconstruct(d.toSample(all, Float32Array.from(d.coefficients)));
    for (let i = 0; i < g.length; i++) expect(back[i]).toBeCloseTo(g[i]!, 4);
  });

  it('returns no atoms for a zero gradient, and a scheme sample the codec accepts', () => {
    expect(lowRankSpectralDecomposition(new Float32Array(12), [3, 4]).coefficients.length).toBe(0);
    const { sample } = lowRankSvdScheme.compress(lowRank(30, 20, 3, 1), [30, 20], { budget: 2 }, { seed: 1, worker: 0, round: 0, layer: 0 });
    expect(sample.scheme).toBe('atomo-svd');
    expect(sample.count).toBeLessThanOrEqual(3);
  });
});
