import { describe, expect, it } from 'vitest';
import { dct2 } from '../../linalg/dct';
import { estimate } from '../estimate';
import { reconstruct } from '../reconstruct';
import { squaredNorm } from '../variance';
import type { LayerMemory } from '../schemes/scheme';
import { factoredGradient, lowRankGradient, randomGradient } from '../testing/gradients';
import type { Shape } from '../types';
import { dctDecomposition } from './dct';
import { entrywiseDecomposition } from './entrywise';
import { spectralDecomposition, spectralRoute, spectralRouteCosts, type SpectralRoute } from './spectral';

const maxDiff = (a: Float32Array, b: Float32Array) => Math.max(...a.map((x, i) => Math.abs(x - b[i]!)));
const maxAbs = (g: Float32Array) => g.reduce((m, x) => Math.max(m, Math.abs(x)), 0);

describe('decompositions: g = Σ λᵢ aᵢ', () => {
  it('entry-wise: λ = g, and a sample of all atoms at scale λ rebuilds g exactly', () => {
    const { grad, shape } = randomGradient();
    const d = entrywiseDecomposition(grad, shape);
    expect(Array.from(d.coefficients)).toEqual(Array.from(grad));
    const all = Uint32Array.from(grad.keys());
    const sample = d.toSample(all, grad.slice());
    expect(sample.scheme).toBe('atomo-entry');
    expect(reconstruct(sample)).toEqual(grad);
  });

  it('spectral: λ = σ (numerical rank only), and all atoms at scale σ rebuild g to float32 rounding', () => {
    for (const { grad, shape } of [randomGradient(), lowRankGradient()]) {
      const d = spectralDecomposition(grad, shape);
      expect(d.coefficients.length).toBe(d.svd.rank);
      const all = Uint32Array.from(d.coefficients.keys());
      const sample = d.toSample(all, Float32Array.from(d.coefficients));
      expect(sample.count).toBe(d.svd.rank);
      expect(sample.u.length).toBe(d.svd.rank * shape[0]);
      expect(sample.v.length).toBe(d.svd.rank * shape[1]);
      // float32 u, v, σ: ~2⁻²⁴ relative per term, summed over ≤ 32 atoms.
      expect(maxDiff(reconstruct(sample), grad)).toBeLessThan(1e-6 * maxAbs(grad));
    }
  });

  it('spectral: a subset keeps the named atoms, in order', () => {
    const { grad, shape } = randomGradient();
    const d = spectralDecomposition(grad, shape);
    const sample = d.toSample(Uint32Array.of(1, 4), Float32Array.of(1, 1));
    const r = d.svd.r;
    for (const [a, k] of [
      [0, 1],
      [1, 4],
    ] as const) {
      for (let i = 0; i < shape[0]; i++) expect(sample.u[a * shape[0] + i]).toBe(Math.fround(d.svd.u[i * r + k]!));
      for (let j = 0; j < shape[1]; j++) expect(sample.v[a * shape[1] + j]).toBe(Math.fround(d.svd.v[j * r + k]!));
    }
  });

  it(
    'Fourier (DCT): λ = the DCT-II coefficients, ‖λ‖ = ' +
      '‖g‖, and all atoms at scale λ rebuild g to float32 rounding',
    () => {
      for (const { grad, shape } of [randomGradient(), lowRankGradient()]) {
        const d = dctDecomposition(grad, shape);
        expect(Array.from(d.coefficients)).toEqual(Array.from(dct2(grad, shape[0], shape[1])));
        expect(Math.abs(squaredNorm(d.coefficients) - squaredNorm(grad))).toBeLessThan(1e-10 * squaredNorm(grad));
        const all = Uint32Array.from(d.coefficients.keys());
        const sample = d.toSample(all, Float32Array.from(d.coefficients));
        expect(sample.scheme).toBe('atomo-dct');
        // float32 coefficients (2⁻²⁴ relative), each spread over every entry by the inverse transform.
        expect(maxDiff(reconstruct(sample), grad)).toBeLessThan(1e-5 * maxAbs(grad));
      }
    },
  );

  it(
    'Fourier (DCT): an unlimited budget sends every coefficient ' +
      '(variance 0), through the codec, at the documented bytes',
    () => {
      const { grad, shape } = randomGradient();
      const elements = shape[0] * shape[1];
      const result = estimate('atomo-dct', grad, shape, { budget: Number.POSITIVE_INFINITY, seed: 3 });
      expect(result.variance).toBe(0);
      expect(maxDiff(result.estimate, grad)).toBeLessThan(1e-5 * maxAbs(grad));
      // Every coefficient of this gradient is non-zero and saturated (p = 1), all of distinct magnitude: deltas
      // all 0 (one varint byte each), τ and a 2-bit code each, and an own float32 for all but the one τ names.
      expect(result.bytes).toBe(12 + 4 + elements + 4 + elements / 4 + 4 * (elements - 1));
    },
  );
});

describe('spectral routes: the cost model per layer kind', () => {
  // Shapes of the project's models at batch 32 (docs/design.md, "Decompositions"; docs/wire-format.md, "Spectral
  // routes").
  it.each<[string, Shape, number | undefined, number | undefined, SpectralRoute]>([
    ['MLP dense1 784×128 with its factors (B = 32)', [784, 128], 32, undefined, 'factored'],
    ['MLP dense2 128×10: B ≥ 10, the gradient is smaller than its factors', [128, 10], 32, undefined, 'direct'],
    ['a bias 1×128', [1, 128], undefined, undefined, 'direct'],
    ['CNN conv1 8×25: im2col factors of 32·576 rows', [8, 25], 32 * 576, undefined, 'direct'],
    ['CNN conv2 16×200, full rank last round: nothing for a sketch to skip', [16, 200], 32 * 64, 16, 'direct'],
    ['a convolution 24×72 with batch·positions 16 (4 × 2×2)', [24, 72], 16, undefined, 'factored'],
    ['784×128 without factors, rank 32 last round', [784, 128], undefined, 32, 'range-finder'],
    ['784×128 without factors, no last round', [784, 128], undefined, undefined, 'direct'],
    ['96×64 rank 3 last round: a sketch of 7 costs more than pivoting to rank 3', [96, 64], undefined, 3, 'direct'],
  ])('%s → %s', (_name, shape, inner, previousRank, route) => {
    expect(spectralRoute(shape, inner, previousRank)).toBe(route);
    const costs = spectralRouteCosts(shape, inner, previousRank);
    for (const other of ['direct', 'factored', 'range-finder'] as const)
      expect(costs[route]).toBeLessThanOrEqual(costs[other]);
  });

  it('keeps the right singular subspace in the memory for the next round, except on the factored route', () => {
    const memory: LayerMemory = {};
    const { grad, shape } = lowRankGradient();
    const d = spectralDecomposition(grad, shape, undefined, memory);
    expect(memory.subspace?.length).toBe(shape[1] * d.svd.rank);
    const factored = factoredGradient();
    const untouched: LayerMemory = {};
    expect(spectralDecomposition(factored.grad, factored.shape, factored.factors, untouched).route).toBe('factored');
    expect(untouched.subspace).toBeUndefined();
  });
});
