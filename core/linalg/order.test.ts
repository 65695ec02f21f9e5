import { describe, expect, it } from 'vitest';
import { descendingOrder } from './order';

/** The order the comparator sort gives: the definition descendingOrder must match. */
const bySort = (key: readonly number[]) => Array.from(key, (_, i) => i).sort((x, y) => key[y]! - key[x]! || x - y);

describe('descendingOrder', () => {
  it('matches the comparator sort on random keys, with ties, negatives, zeros and infinities', () => {
    let seed = 7;
    const next = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let trial = 0; trial < 200; trial++) {
      const n = 1 + Math.floor(next() * 70);
      // Few distinct values, so ties are common.
      const key = Array.from(
        { length: n },
        () => [0, -0, 1, 2.5, -3, 1e-300, Infinity, -Infinity][Math.floor(next() * 8)]! * (next() < 0.5 ? 1 : next()),
      );
      expect([...descendingOrder(Float64Array.from(key), n)]).toEqual(bySort(key));
    }
  });

  it('reads only the first n keys, and gives an empty order for n = 0', () => {
    expect([...descendingOrder([1, 3, 2, 99], 3)]).toEqual([1, 2, 0]);
    expect(descendingOrder([], 0).length).toBe(0);
  });
});
