import { describe, expect, it } from 'vitest';
import { gaussians } from '../linalg/random-matrix';
import { atomicVariance } from './variance';
import { samplingProbabilities } from './waterfilling';

// Water-filling is a handful of float64 sums and one division per atom, so
// Σp matches s to a few ulps of s; 1e-9 leaves that room and still catches
// an atom dropped from, or counted twice in, the budget (an error of O(p)).
const SUM_TOL = 1e-9;

function sum(a: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]!;
  return s;
}

/** Σ λᵢ²/pᵢ over the non-zero atoms: the objective water-filling minimises. */
function objective(lambda: ArrayLike<number>, p: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < lambda.length; i++) if (lambda[i] !== 0) s += lambda[i]! ** 2 / p[i]!;
  return s;
}

/** Reference by bisection on τ: p = min(1, |λ|/τ) with Σp = s. Slow and obviously right. */
function bisectionProbabilities(lambda: ArrayLike<number>, budget: number): Float64Array {
  const abs = Array.from(lambda, Math.abs);
  const total = (tau: number) => abs.reduce((acc, a) => acc + Math.min(1, a / tau), 0);
  let lo = 0;
  let hi = abs.reduce((a, b) => a + b, 0) / budget + Math.max(...abs);
  for (let it = 0; it < 200; it++) {
    const mid = (lo + hi) / 2;
    if (total(mid) > budget) lo = mid;
    else hi = mid;
  }
  return Float64Array.from(abs, (a) => Math.min(1, a / hi));
}

/** Heavy-tailed magnitudes (some saturate at moderate budgets), with exact zeros. */
function testMagnitudes(n: number, seed: number): Float64Array {
  const g = gaussians(n, seed);
  return g.map((x, i) => (i % 17 === 5 ? 0 : x * x * x));
}

describe('samplingProbabilities', () => {
  it('matches hand-worked examples (docs/design.md, with the equality edge s·|λ₁| = Σ|λ|)', () => {
    expect(Array.from(samplingProbabilities([4, 2, 1, 1], 2))).toEqual([1, 0.5, 0.25, 0.25]);
    expect(Array.from(samplingProbabilities([4, 2, 1, 1], 3))).toEqual([1, 1, 0.5, 0.5]);
    expect(Array.from(samplingProbabilities([1, -4, 0, 1, 2], 3))).toEqual([0.5, 1, 0, 0.5, 1]);
  });

  it('has Σp = s and p ∈ [0, 1], with zeros at p = 0, for s ≤ #non-zero', () => {
    for (const seed of [1, 2, 3]) {
      const lambda = testMagnitudes(1000, seed);
      const nonZero = lambda.filter((x) => x !== 0).length;
      for (const budget of [0.01, 0.5, 1, 2.5, 10, 100, 500, nonZero - 0.5, nonZero]) {
        const p = samplingProbabilities(lambda, budget);
        expect(Math.abs(sum(p) - budget)).toBeLessThan(SUM_TOL * Math.max(1, budget));
        const bad = [...p.keys()].filter((i) => !(p[i]! >= 0 && p[i]! <= 1) || (p[i] === 0) !== (lambda[i] === 0));
        expect(bad).toEqual([]);
      }
    }
  });

  it('agrees with a bisection reference p = min(1, |λ|/τ)', () => {
    const lambda = testMagnitudes(300, 7);
    for (const budget of [0.3, 3, 30, 200]) {
      const p = samplingProbabilities(lambda, budget);
      const reference = bisectionProbabilities(lambda, budget);
      // Bisection pins τ to ~1e-15 relative; 1e-9 allows for its conditioning.
      const worst = Math.max(...p.map((x, i) => Math.abs(x - reference[i]!)));
      expect(worst).toBeLessThan(1e-9);
    }
  });

  it('minimises Σλ²/p against 1,000 random and 1,000 nearby feasible p per budget', () => {
    const lambda = testMagnitudes(40, 11);
    const nonZeroIdx = [...lambda.keys()].filter((i) => lambda[i] !== 0);
    const n = nonZeroIdx.length;
    const noise = gaussians(2000 * n * 2, 12);
    for (const budget of [0.7, 4, 15]) {
      const optimum = objective(lambda, samplingProbabilities(lambda, budget));
      for (let t = 0; t < 1000; t++) {
        // A random feasible point: random positive weights scaled to Σ = s,
        // pulled towards the uniform s/n just enough that max p ≤ 1.
        const w = nonZeroIdx.map((_, k) => Math.exp(noise[t * 2 * n + k]!));
        const total = sum(w);
        const raw = w.map((x) => (budget * x) / total);
        const uniform = budget / n;
        const largest = Math.max(...raw);
        const theta = largest <= 1 ? 1 : (1 - uniform) / (largest - uniform);
        const p = new Float64Array(lambda.length);
        nonZeroIdx.forEach((i, k) => (p[i] = theta * raw[k]! + (1 - theta) * uniform));
        expect(objective(lambda, p)).toBeGreaterThanOrEqual(optimum * (1 - 1e-12));
      }
      // And small feasible moves away from the optimum (Σd = 0, staying in (0, 1]).
      const best = samplingProbabilities(lambda, budget);
      for (let t = 0; t < 1000; t++) {
        const [a, b] = [nonZeroIdx[t % n]!, nonZeroIdx[(t * 7 + 3) % n]!];
        if (a === b) continue;
        const p = best.slice();
        const step = 1e-4 * Math.min(p[a]!, 1 - p[b]!);
        p[a] = p[a]! - step;
        p[b] = p[b]! + step;
        expect(objective(lambda, p)).toBeGreaterThanOrEqual(optimum * (1 - 1e-12));
      }
    }
  });

  it('treats ties alike and is equivariant under permutation and sign', () => {
    expect(Array.from(samplingProbabilities([3, 3, 3, 3], 2))).toEqual([0.5, 0.5, 0.5, 0.5]);
    expect(Array.from(samplingProbabilities([5, 1, 5, 1], 3))).toEqual([1, 0.5, 1, 0.5]);
    const lambda = testMagnitudes(50, 3);
    const p = samplingProbabilities(lambda, 6);
    const reversed = samplingProbabilities(
      lambda
        .slice()
        .reverse()
        .map((x) => -x),
      6,
    );
    expect(Array.from(reversed).reverse()).toEqual(Array.from(p));
  });

  it('sends every non-zero atom when s ≥ #non-zero (including s = Infinity)', () => {
    const lambda = [0, 2, -1e-30, 0, 7];
    for (const budget of [3, 3.5, 1000, Number.POSITIVE_INFINITY]) {
      expect(Array.from(samplingProbabilities(lambda, budget))).toEqual([0, 1, 1, 0, 1]);
    }
  });

  it('handles s < 1: p = s|λ|/‖λ‖₁', () => {
    const p = samplingProbabilities([2, -1, 1], 0.4);
    expect(p[0]).toBeCloseTo(0.2, 15);
    expect(p[1]).toBeCloseTo(0.1, 15);
    expect(p[2]).toBeCloseTo(0.1, 15);
  });

  it('gives the s-balanced variance ‖λ‖₁²/s − ‖λ‖₂² when no atom saturates', () => {
    const lambda = gaussians(200, 5);
    const l1 = lambda.reduce((a, x) => a + Math.abs(x), 0);
    const l2sq = lambda.reduce((a, x) => a + x * x, 0);
    const budget = 5; // 5·max|λ| < ‖λ‖₁ for 200 Gaussians
    const variance = atomicVariance(lambda, samplingProbabilities(lambda, budget));
    expect(variance).toBeCloseTo((l1 * l1) / budget - l2sq, 8);
  });

  it('gives all zeros for a zero vector and an empty one', () => {
    expect(Array.from(samplingProbabilities([0, 0, 0], 2))).toEqual([0, 0, 0]);
    expect(samplingProbabilities([], 2).length).toBe(0);
  });

  it('rejects a budget that is not > 0, and non-finite magnitudes', () => {
    for (const budget of [0, -1, Number.NaN]) expect(() => samplingProbabilities([1, 2], budget)).toThrow(RangeError);
    expect(() => samplingProbabilities([1, Number.POSITIVE_INFINITY], 1)).toThrow(RangeError);
  });
});
