import { describe, expect, it } from 'vitest';
import { seededRng } from '../testing/seeded';
import { aggregate, lowerMedian, norm2, ruleDropped } from './robust';

const f = (...values: number[]) => Float32Array.from(values);

describe('aggregation rules, checked by hand', () => {
  it('mean: (1/n) Σ xᵢ', () => {
    const { value, clipped } = aggregate({ kind: 'mean' }, [f(1, 2), f(3, -4), f(5, 8)], 2);
    expect([...value]).toEqual([3, 2]);
    expect(clipped).toBe(0);
  });

  it('norm bound: the lower median norm M, each estimate scaled to at most k·M, then the mean', () => {
    // Norms 1, 2, 3 and 100; lower median M = 2; k = 3 → bound 6; only the last is scaled, by 6/100.
    const estimates = [f(1, 0), f(0, 2), f(3, 0), f(0, 100)];
    expect(estimates.map(norm2)).toEqual([1, 2, 3, 100]);
    expect(lowerMedian([1, 2, 3, 100])).toBe(2);
    const { value, clipped } = aggregate({ kind: 'norm-bound', k: 3 }, estimates, 2);
    expect(clipped).toBe(1);
    expect(value[0]).toBeCloseTo((1 + 3) / 4, 6);
    expect(value[1]).toBeCloseTo((2 + 6) / 4, 6);
  });

  it('norm bound leaves estimates within k·M untouched: it is then the mean', () => {
    const estimates = [f(1, 1), f(2, 0), f(0, -1.5)];
    expect([...aggregate({ kind: 'norm-bound', k: 3 }, estimates, 2).value]).toEqual([
      ...aggregate({ kind: 'mean' }, estimates, 2).value,
    ]);
    expect(aggregate({ kind: 'norm-bound', k: 3 }, estimates, 2).clipped).toBe(0);
  });

  it('median: per coordinate, the middle value, or the mean of the two middle ones', () => {
    expect([...aggregate({ kind: 'median' }, [f(5, -1), f(1, 7), f(3, 2)], 2).value]).toEqual([3, 2]);
    expect([...aggregate({ kind: 'median' }, [f(5), f(1), f(3), f(100)], 1).value]).toEqual([4]);
  });

  it('trimmed mean: per coordinate, drop ⌊trim·n⌋ at each end, average the rest', () => {
    // n = 5, trim 0.2 → drop 1 at each end: sorted 1, 2, 3, 4, 1000 → (2 + 3 + 4) / 3 = 3.
    expect([...aggregate({ kind: 'trimmed-mean', trim: 0.2 }, [f(4), f(1000), f(2), f(1), f(3)], 1).value]).toEqual([
      3,
    ]);
    // trim 0 is the mean.
    expect([...aggregate({ kind: 'trimmed-mean', trim: 0 }, [f(4), f(1000), f(2), f(1), f(3)], 1).value]).toEqual([
      202,
    ]);
  });

  it('counts what each rule did: clipped estimates, values dropped per coordinate', () => {
    // One contribution 10⁶ times the others: the norm bound clips it, the mean takes it as it is.
    const estimates = [f(1, 0), f(0, 1), f(1, 1), f(1e6, 1e6)];
    expect(aggregate({ kind: 'mean' }, estimates, 2)).toMatchObject({ clipped: 0, dropped: 0 });
    expect(aggregate({ kind: 'norm-bound', k: 3 }, estimates, 2)).toMatchObject({ clipped: 1, dropped: 0 });
    // The median of 4 averages the 2 middle values and drops 2; of 5 it keeps 1 and drops 4.
    expect(aggregate({ kind: 'median' }, estimates, 2)).toMatchObject({ clipped: 0, dropped: 2 });
    expect(aggregate({ kind: 'median' }, [...estimates, f(0, 0)], 2).dropped).toBe(4);
    // Trim 0.2 of 5: one at each end.
    expect(aggregate({ kind: 'trimmed-mean', trim: 0.2 }, [...estimates, f(0, 0)], 2).dropped).toBe(2);
    expect(ruleDropped({ kind: 'median' }, 1)).toBe(0);
    expect(ruleDropped({ kind: 'median' }, 2)).toBe(0);
    expect(ruleDropped({ kind: 'trimmed-mean', trim: 0.1 }, 9)).toBe(0);
  });

  it('refuses mismatched lengths and an empty round', () => {
    expect(() => aggregate({ kind: 'mean' }, [], 2)).toThrow(RangeError);
    expect(() => aggregate({ kind: 'median' }, [f(1, 2), f(1)], 2)).toThrow(RangeError);
  });
});

describe('one attacker among honest workers', () => {
  // 9 honest estimates g + noise (noise 0.5 per entry), one attacker sending −10⁶·g (finite: it decodes).
  const length = 64;
  const rng = seededRng(7);
  const g = Float32Array.from({ length }, () => 2 * rng() - 1);
  const honest = Array.from({ length: 9 }, () => Float32Array.from(g, (x) => x + (rng() - 0.5)));
  const attacker = Float32Array.from(g, (x) => -1e6 * x);
  const distance = (a: Float32Array) => norm2(Float32Array.from(a, (x, i) => x - g[i]!));

  it('moves the mean arbitrarily far', () => {
    expect(distance(aggregate({ kind: 'mean' }, [...honest, attacker], length).value)).toBeGreaterThan(1e4 * norm2(g));
  });

  it.each([
    ['norm-bound', { kind: 'norm-bound', k: 3 }],
    ['median', { kind: 'median' }],
    ['trimmed-mean', { kind: 'trimmed-mean', trim: 0.1 }],
  ] as const)('%s stays near the true gradient', (_name, rule) => {
    const { value } = aggregate(rule, [...honest, attacker], length);
    // The honest mean is within ~0.5/√9 per entry of g; the attacker may add at most its bounded share:
    // for the norm bound k·M/n ≈ 3·‖g‖/10 in norm, so the aggregate stays within ‖g‖ of g; a sign-flipped
    // mean would be ~10⁶‖g‖ away.
    expect(distance(value)).toBeLessThan(norm2(g));
    // And it still points along g: positive inner product.
    let dot = 0;
    for (let i = 0; i < length; i++) dot += value[i]! * g[i]!;
    expect(dot).toBeGreaterThan(0.3 * norm2(g) ** 2);
  });
});
