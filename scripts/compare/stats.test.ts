import { describe, expect, it } from 'vitest';
import { seededRng } from '../../core/testing/seeded';
import {
  accuracyAtMB,
  atTarget,
  bootstrapMeanCi,
  bootstrapRatioCi,
  censoredMean,
  quantile,
  reach,
  spread,
  type EvalPoint,
} from './stats';

const point = (round: number, accuracy: number, totalMB: number): EvalPoint => ({
  round,
  accuracy,
  uplinkMB: totalMB / 2,
  totalMB,
  seconds: [round],
});

describe('comparison statistics', () => {
  it('takes mean and sample standard deviation over the seeds that got there', () => {
    expect(spread([1, 2, 3])).toEqual({ mean: 2, sd: 1, n: 3 });
    expect(spread([4, null])).toEqual({ mean: 4, sd: 0, n: 1 });
    expect(spread([null])).toEqual({ mean: null, sd: null, n: 0 });
  });

  it('finds the first evaluation at a target and the accuracy within a byte budget', () => {
    const points = [point(2, 0.8, 10), point(4, 0.91, 20), point(6, 0.93, 30)];
    expect(reach(points, 0.9)?.round).toBe(4);
    expect(reach(points, 0.95)).toBeNull();
    expect(accuracyAtMB(points, 25)).toBe(0.91);
    expect(accuracyAtMB(points, 5)).toBeNull();
  });
});

describe('the bootstrap interval of a ratio of means', () => {
  it('is exact for constant samples and holds the true ratio of two noisy ones', () => {
    expect(bootstrapRatioCi([6, 6, 6], [2, 2])).toEqual({ mean: 3, lo: 3, hi: 3 });
    // Means 10 and 5 (ratio 2); with 20 runs each of sd 1 the ratio's sd is about 0.05: 2 lies well inside.
    const rng = seededRng(7);
    const noisy = (mean: number) => Array.from({ length: 20 }, () => mean + (rng() - 0.5) * Math.sqrt(12));
    const ci = bootstrapRatioCi(noisy(10), noisy(5));
    expect(ci.lo).toBeLessThan(2);
    expect(ci.hi).toBeGreaterThan(2);
    expect(ci.hi - ci.lo).toBeLessThan(0.5);
    expect(() => bootstrapRatioCi([], [1])).toThrow(RangeError);
  });
});

describe('bootstrap intervals', () => {
  it('gives a constant sample a zero-width interval, and the same interval on every call', () => {
    expect(bootstrapMeanCi([7, 7, 7, 7, 7])).toEqual({ mean: 7, lo: 7, hi: 7 });
    const sample = [3, 9, 4, 12, 6];
    expect(bootstrapMeanCi(sample)).toEqual(bootstrapMeanCi(sample));
    const { mean, lo, hi } = bootstrapMeanCi(sample);
    expect(mean).toBe(6.8);
    expect(lo).toBeLessThan(mean);
    expect(hi).toBeGreaterThan(mean);
    expect(lo).toBeGreaterThanOrEqual(3);
    expect(hi).toBeLessThanOrEqual(12);
  });

  it('interpolates quantiles between order statistics', () => {
    expect(quantile([1, 2, 3, 4, 5], 0.5)).toBe(3);
    expect(quantile([0, 10], 0.25)).toBe(2.5);
    expect(quantile([4], 0.975)).toBe(4);
  });

  it('covers the true mean of a known distribution at about 95%, with the normal width', () => {
    // 400 samples of 20 normals (mean 1, sd 2, Box–Muller on mulberry32 seed 5); each sample's interval from its
    // own bootstrap stream. The percentile bootstrap covers a little under 95% at n = 20 (≈ 93%); 400 trials give
    // a binomial sd of 1.1 points, so [88%, 98%] is more than 4 sd around either. The mean width is checked
    // against the normal interval 2·1.96·σ/√n (within 15%: the bootstrap's sd is the √((n−1)/n) plug-in).
    const rng = seededRng(5);
    const normal = () => Math.sqrt(-2 * Math.log(1 - rng())) * Math.cos(2 * Math.PI * rng());
    const trials = 400;
    const n = 20;
    let covered = 0;
    let width = 0;
    for (let t = 0; t < trials; t++) {
      const sample = Array.from({ length: n }, () => 1 + 2 * normal());
      const ci = bootstrapMeanCi(sample, { resamples: 2000, seed: t + 1 });
      if (ci.lo <= 1 && 1 <= ci.hi) covered += 1;
      width += (ci.hi - ci.lo) / trials;
    }
    expect(covered / trials).toBeGreaterThan(0.88);
    expect(covered / trials).toBeLessThan(0.98);
    expect(width / ((2 * 1.96 * 2) / Math.sqrt(n))).toBeGreaterThan(0.85);
    expect(width / ((2 * 1.96 * 2) / Math.sqrt(n))).toBeLessThan(1.15);
  });
});

describe('censored runs', () => {
  it('counts a run that never reached the target at its end, as a lower bound', () => {
    const reached = [point(2, 0.8, 10), point(4, 0.91, 20), point(6, 0.93, 30)];
    const never = [point(2, 0.7, 10), point(4, 0.8, 20), point(6, 0.85, 30)];
    expect(atTarget(reached, 0.9, (p) => p.round)).toEqual({ value: 4, censored: false });
    expect(atTarget(never, 0.9, (p) => p.round)).toEqual({ value: 6, censored: true });
    expect(atTarget(never, 0.9, (p) => p.totalMB)).toEqual({ value: 30, censored: true });
    expect(atTarget([], 0.9, (p) => p.round)).toBeNull();
    const summary = censoredMean([reached, never, never].map((p) => atTarget(p, 0.9, (q) => q.round)));
    expect(summary).toMatchObject({ mean: (4 + 6 + 6) / 3, n: 3, censored: 2 });
    expect(summary!.lo).toBeGreaterThanOrEqual(4);
    expect(summary!.hi).toBeLessThanOrEqual(6);
    expect(censoredMean([null])).toBeNull();
  });
});
