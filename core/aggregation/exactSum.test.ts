import { describe, expect, it } from 'vitest';
import { seededRng, type Rng } from '../testing/seeded';
import { accumulate, addPartial, estimateStats, finishMean, planSum, type SumRule } from './exactSum';
import { aggregate } from './robust';

/** Entries of wildly different sizes: signs, zeros, subnormals, 1e-30 … 1e30, a few near float32's limits. */
function hostileEstimate(rng: Rng, length: number): Float32Array {
  return Float32Array.from({ length }, () => {
    const r = rng();
    if (r < 0.05) return 0;
    if (r < 0.08) return (rng() < 0.5 ? -1 : 1) * 1e-44 * (1 + rng());
    if (r < 0.1) return (rng() < 0.5 ? -1 : 1) * 3e38 * rng();
    return (rng() < 0.5 ? -1 : 1) * 10 ** (60 * rng() - 30);
  });
}

/** Everything summed by one process, in the given order. */
function sumAll(rule: SumRule, estimates: readonly Float32Array[], segments: readonly number[]): Float32Array {
  return aggregate(rule, estimates, estimates[0]!.length, segments).value;
}

/** The same estimates split over `groups` "processes": stats first, then one partial sum each, added by a "leader". */
function sumInGroups(
  rule: SumRule,
  estimates: readonly Float32Array[],
  segments: readonly number[],
  groupOf: (i: number) => number,
  groups: number,
): Float32Array {
  const plan = planSum(
    rule,
    estimates.map((e) => estimateStats(e, segments)),
  );
  const length = estimates[0]!.length;
  const partials = Array.from({ length: groups }, () => new Float64Array(length));
  estimates.forEach((e, i) => accumulate(partials[groupOf(i)]!, e, plan.weights[i]!, plan, segments));
  const total = new Float64Array(length);
  for (const partial of [...partials].reverse()) addPartial(total, partial);
  return finishMean(total, plan, segments);
}

const bits = (x: Float32Array) => [...new Uint32Array(x.buffer, x.byteOffset, x.length)];

describe('the exact sum: the same bits whatever the order and grouping', () => {
  const rules: [string, SumRule][] = [
    ['mean', { kind: 'mean' }],
    ['norm-bound', { kind: 'norm-bound', k: 3 }],
  ];
  it.each(rules)('%s over 40 hostile estimates: reversed, shuffled, and in 3 or 7 partial sums', (_name, rule) => {
    const rng = seededRng(11);
    const length = 300;
    const segments = [0, 100, 250];
    const estimates = Array.from({ length: 40 }, () => hostileEstimate(rng, length));
    const reference = bits(sumAll(rule, estimates, segments));
    expect(bits(sumAll(rule, [...estimates].reverse(), segments))).toEqual(reference);
    const shuffled = [...estimates].sort(() => rng() - 0.5);
    expect(bits(sumAll(rule, shuffled, segments))).toEqual(reference);
    expect(bits(sumInGroups(rule, estimates, segments, (i) => i % 3, 3))).toEqual(reference);
    expect(bits(sumInGroups(rule, estimates, segments, () => Math.floor(rng() * 7), 7))).toEqual(reference);
  });

  it('where float64 partial sums disagree: 1e20, 1, −1e20 grouped two ways', () => {
    // In float64, (1e20 + 1) − 1e20 = 0 but (1e20 − 1e20) + 1 = 1: two groupings, two means (0 and 1/3).
    const big = Math.fround(1e20);
    expect(big + 1 - big).toBe(0);
    const estimates = [Float32Array.of(big), Float32Array.of(1), Float32Array.of(-big)];
    const firstTwo = sumInGroups({ kind: 'mean' }, estimates, [0], (i) => (i < 2 ? 0 : 1), 2);
    const outerTwo = sumInGroups({ kind: 'mean' }, estimates, [0], (i) => (i === 1 ? 1 : 0), 2);
    expect(bits(firstTwo)).toEqual(bits(outerTwo));
    // The scale is 2^(51−2−67) = 2^−18: units of 262144, so the 1 is below the resolution
    // (n·max·2⁻⁵¹ ≈ 1.3·10⁵) in either grouping and the mean is 0 both ways.
    expect(firstTwo[0]).toBe(0);
  });

  it('is the mean within n·max|x|·2⁻⁵¹ of the float64 sum, per segment', () => {
    const rng = seededRng(5);
    const length = 200;
    const segments = [0, 120];
    const estimates = Array.from({ length: 25 }, () =>
      Float32Array.from({ length }, () => (rng() - 0.5) * (rng() < 0.1 ? 1e4 : 1)),
    );
    const value = sumAll({ kind: 'mean' }, estimates, segments);
    segments.forEach((start, s) => {
      const end = s + 1 < segments.length ? segments[s + 1]! : length;
      let max = 0;
      for (const e of estimates) for (let i = start; i < end; i++) max = Math.max(max, Math.abs(e[i]!));
      for (let i = start; i < end; i++) {
        let exact = 0;
        for (const e of estimates) exact += e[i]!;
        exact /= estimates.length;
        // The fixed-point error bound, plus the final float32 rounding of the mean (half an ulp, 2⁻²⁴ relative).
        const tolerance = 25 * max * 2 ** -51 + Math.abs(exact) * 2 ** -24;
        expect(Math.abs(value[i]! - exact)).toBeLessThanOrEqual(tolerance);
      }
    });
  });

  it('an all-zero segment sums to zero and leaves the others alone', () => {
    const f = (...v: number[]) => Float32Array.from(v);
    const { value } = aggregate({ kind: 'mean' }, [f(0, 0, 1, 3), f(0, 0, 2, 5)], 4, [0, 2]);
    expect([...value]).toEqual([0, 0, 1.5, 4]);
  });

  it('the norm bound weights the lower median: clipped terms are the rounded w·x', () => {
    const stats = [1, 2, 100].map((norm) => ({ norm, segmentMax: [norm] }));
    const plan = planSum({ kind: 'norm-bound', k: 3 }, stats);
    expect(plan.weights).toEqual([1, 1, 6 / 100]);
    expect(plan.clipped).toBe(1);
    // n = 3 → 2 count bits; the largest term max(1, 2, fround(0.06·100)) = 6 < 2³ → S = 51 − 2 − 3.
    expect(plan.scales).toEqual([46]);
  });

  it('refuses an empty round and mismatched lengths', () => {
    expect(() => planSum({ kind: 'mean' }, [])).toThrow(RangeError);
    expect(() => accumulate(new Float64Array(2), new Float32Array(3), 1, { scales: [0] }, [0])).toThrow(RangeError);
    expect(() => addPartial(new Float64Array(2), new Float64Array(3))).toThrow(RangeError);
  });
});
