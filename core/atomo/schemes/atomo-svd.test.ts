/**
 * Spectral ATOMO: unbiasedness and the closed-form variance on orthonormal
 * rank-one atoms. The SVD is computed once per gradient and sampled 2,000
 * times (the scheme's own path after decomposition: sampleAtoms, toSample,
 * reconstruct); estimate() is checked to be exactly that path plus the codec.
 */
import { describe, expect, it } from 'vitest';
import { bernoulli, randomBits, type StreamId } from '../../rng';
import { spectralDecomposition, type SpectralRoute } from '../decompositions/spectral';
import { estimate } from '../estimate';
import { l1Norm } from '../indicator';
import { reconstruct } from '../reconstruct';
import { spectralCoordinateVariance } from '../testing/coordinate-variance';
import {
  convFactoredGradient,
  factoredGradient,
  lowRankGradient,
  randomGradient,
  rangeFinderGradient,
  type FactoredTestGradient,
  type TestGradient,
} from '../testing/gradients';
import { biasedCoordinates, monteCarlo } from '../testing/monte-carlo';
import { realisedError, squaredNorm } from '../variance';
import { sampleAtoms } from './atomo';
import { atomoSvdScheme } from './atomo-svd';
import type { LayerMemory } from './scheme';

const TRIALS = 2000;
// As in unbiased.test.ts: 5 exact standard errors per coordinate.
const SIGMAS = 5;
// The atoms travel as float32 u, v and σ/p: each ĝᵢⱼ carries rounding of
// ~2⁻²⁴·Σₖ(σₖ/pₖ)|uᵢₖvⱼₖ| ≲ 1e-7·‖g‖∞ at these budgets; 1e-6·‖g‖∞ allows
// ten times that.
const ROUNDING = 1e-6;

const streamOf = (seed: number): StreamId => ({ seed, worker: 0, round: 0, layer: 0 });
const maxAbs = (g: Float32Array) => g.reduce((m, x) => Math.max(m, Math.abs(x)), 0);

const warm = rangeFinderGradient();

describe.each<{
  gradient: TestGradient | FactoredTestGradient;
  budget: number;
  memory?: LayerMemory;
  route?: SpectralRoute;
}>([
  { gradient: randomGradient(), budget: 10 }, // 32 atoms; σ₁ (from the spike) saturates
  { gradient: lowRankGradient(), budget: 1.5 }, // 3 atoms that matter + float32 noise atoms
  { gradient: factoredGradient(), budget: 2.5 }, // the factored route: 6 atoms, σ₀ saturates
  // The range finder, warm-started from last round's subspace: 12 atoms.
  { gradient: warm.gradient, budget: 3, memory: warm.memory, route: 'range-finder' },
  // A convolution's im2col factors from the CPU backend (batch 4 × 4 output pixels < 24 output channels): 16 atoms.
  { gradient: convFactoredGradient(), budget: 4 },
])('spectral ATOMO on the $gradient.name gradient, s = $budget', ({ gradient, budget, memory, route }) => {
  const { grad, shape } = gradient;
  const factors = 'factors' in gradient ? gradient.factors : undefined;
  const decomposition = spectralDecomposition(grad, shape, factors, memory === undefined ? undefined : { ...memory });

  it('takes the route its inputs call for', () => {
    expect(decomposition.route).toBe(route ?? (factors === undefined ? 'direct' : 'factored'));
  });

  it('has orthonormal atoms in descending σ order', () => {
    const { coefficients } = decomposition;
    for (let k = 1; k < coefficients.length; k++) expect(coefficients[k]!).toBeLessThanOrEqual(coefficients[k - 1]!);
    // An atom uₖvₖᵀ has unit Frobenius norm and ⟨uₖvₖᵀ, uₗvₗᵀ⟩ = (uₖ·uₗ)(vₖ·vₗ).
    const { u, v, r, rows, cols } = decomposition.svd;
    const dot = (x: Float64Array, len: number, a: number, b: number) => {
      let s = 0;
      for (let i = 0; i < len; i++) s += x[i * r + a]! * x[i * r + b]!;
      return s;
    };
    for (let a = 0; a < coefficients.length; a++) {
      for (let b = 0; b < coefficients.length; b++) {
        const inner = dot(u, rows, a, b) * dot(v, cols, a, b);
        expect(Math.abs(inner - (a === b ? 1 : 0))).toBeLessThan(1e-10);
      }
    }
  });

  it('is unbiased, and the realised error matches Σσ²(1/p − 1)', () => {
    let variance = Number.NaN;
    let probabilities: Float64Array = new Float64Array(0);
    const summary = monteCarlo(grad, TRIALS, (seed) => {
      const result = sampleAtoms(decomposition, budget, streamOf(seed));
      variance = result.variance;
      probabilities = result.probabilities;
      return reconstruct(result.sample);
    });
    // The budget is spent: Σp = s (so some atoms really are random).
    expect(probabilities.reduce((a, b) => a + b, 0)).toBeCloseTo(budget, 9);
    const coordinateVariance = spectralCoordinateVariance(decomposition, probabilities);
    const total = coordinateVariance.reduce((a, b) => a + b, 0);
    // Σᵢⱼ uᵢₖ²vⱼₖ² = 1 per atom, so the coordinates add up to the closed form (to the SVD's ~1e-13).
    expect(Math.abs(total - variance)).toBeLessThan(1e-9 * variance);

    const failures = biasedCoordinates(grad, summary, coordinateVariance, SIGMAS, ROUNDING * maxAbs(grad));
    expect(failures.slice(0, 5)).toEqual([]);
    expect(Math.abs(summary.meanError - variance)).toBeLessThanOrEqual(
      SIGMAS * summary.meanErrorStandardError + 1e-9 * variance,
    );
  });

  it('reports ‖ĝ − g‖² from σ and the scales sent, ‖g‖², and ‖g‖₁ where it reads g', () => {
    for (const s of [budget / 4, budget, 4 * budget, 1000]) {
      for (const seed of [0, 1, 2, 3]) {
        const result = atomoSvdScheme.compress(
          grad,
          shape,
          { budget: s, ...(memory === undefined ? {} : { memory: { ...memory } }) },
          streamOf(seed),
          factors,
        );
        if (decomposition.route === 'factored') {
          // ‖g‖² of the factors' product, from the SVD: Σσ² + the cut-off directions' residual, without reading
          // g; it differs from the float32 g's by that rounding (2⁻²³ relative at most; 1e-6 is eight times that).
          expect(result.gradientNorms?.l1).toBeUndefined();
          expect(result.gradientNorms!.normSq).toBe(squaredNorm(decomposition.coefficients) + decomposition.residual!);
          expect(Math.abs(result.gradientNorms!.normSq - squaredNorm(grad))).toBeLessThanOrEqual(
            1e-6 * squaredNorm(grad),
          );
        } else {
          expect(result.gradientNorms).toEqual({ normSq: squaredNorm(grad), l1: l1Norm(grad) });
        }
        const exact = realisedError(reconstruct(result.sample), grad);
        // The σ-space error ‖a‖² (a = ĝ − G) differs from the wire's ‖a + δ‖² by at most
        // 2‖a‖‖δ‖ + ‖δ‖², where δ = (ĝ_wire − ĝ) + (G − g) is float32 rounding: of u, v and the
        // scales (≲ 2⁻²³‖ĝ‖), and of g against the factors' product (≲ 2⁻²³‖g‖ here). η =
        // 1e-6·(‖ĝ‖ + ‖g‖) is about ten times that.
        const estimateNorm = Math.sqrt(result.sample.scales.reduce((sum, x) => sum + x * x, 0));
        const eta = 1e-6 * (estimateNorm + Math.sqrt(squaredNorm(grad)));
        expect(Math.abs(result.realised! - exact)).toBeLessThanOrEqual(
          2 * Math.sqrt(result.realised!) * eta + eta * eta,
        );
      }
    }
  });

  it('estimate() is exactly the scheme path through the codec', () => {
    for (const seed of [0, 1, 2]) {
      const direct = atomoSvdScheme.compress(grad, shape, { budget }, streamOf(seed));
      const viaCodec = estimate('atomo-svd', grad, shape, { budget, seed });
      expect(viaCodec.estimate).toEqual(reconstruct(direct.sample));
      expect(viaCodec.variance).toBe(direct.variance);
      // Spectral body: 4 + 4·k·(rows + cols + 1) after a 12-byte header.
      expect(viaCodec.bytes).toBe(12 + 4 + 4 * direct.sample.count * (shape[0] + shape[1] + 1));
    }
  });
});

describe('spectral ATOMO, deterministic cases', () => {
  it('sends every atom when s ≥ rank: variance 0 and ĝ = g to float32 rounding', () => {
    const { grad, shape } = lowRankGradient();
    const result = atomoSvdScheme.compress(grad, shape, { budget: 64 }, streamOf(0));
    expect(result.variance).toBe(0);
    const out = reconstruct(result.sample);
    const tol = ROUNDING * maxAbs(grad);
    expect(Math.max(...out.map((x, i) => Math.abs(x - grad[i]!)))).toBeLessThan(tol);
  });

  it('sends nothing for a zero gradient', () => {
    const result = atomoSvdScheme.compress(new Float32Array(12), [3, 4], { budget: 2 }, streamOf(0));
    expect(result.sample.count).toBe(0);
    expect(result.variance).toBe(0);
  });

  it('indexes atom k by randomBits(stream, k): a rank-one gradient keeps its atom iff draw 0 says so', () => {
    // σ₀ = 2 and s = 0.5: p₀ = 0.5, and the outcome must be bernoulli(randomBits(stream, 0), 0.5).
    const grad = Float32Array.of(2, 0, 0, 0, 0, 0);
    let kept = 0;
    for (let seed = 0; seed < 200; seed++) {
      const { sample } = atomoSvdScheme.compress(grad, [2, 3], { budget: 0.5 }, streamOf(seed));
      expect(sample.count).toBe(bernoulli(randomBits(streamOf(seed), 0), 0.5) ? 1 : 0);
      if (sample.count === 1) expect(sample.scales[0]).toBe(4); // σ/p = 2/0.5
      kept += sample.count;
    }
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(200);
  });
});

describe('spectral ATOMO on the factored route', () => {
  it.each([factoredGradient(), convFactoredGradient()])(
    'reads no value of the $name gradient: its atoms and ‖g‖² come from the factors',
    (gradient) => {
      const { grad, shape, factors } = gradient;
      const options = { budget: 3 };
      const fromFactors = atomoSvdScheme.compress(new Float32Array(grad.length), shape, options, streamOf(7), factors);
      expect(fromFactors.sample.count).toBeGreaterThan(0);
      expect(fromFactors).toEqual(atomoSvdScheme.compress(grad, shape, options, streamOf(7), factors));
      // The shape is still checked.
      expect(() =>
        atomoSvdScheme.compress(new Float32Array(grad.length - 1), shape, options, streamOf(7), factors),
      ).toThrow(/needs/);
    },
  );
});
