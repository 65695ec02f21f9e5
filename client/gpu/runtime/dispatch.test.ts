import { describe, expect, it } from 'vitest';
import { PlanCache } from './dispatch';

/** A plan that records whether it was destroyed. */
function fakePlan(name: string) {
  return {
    name,
    destroyed: false,
    destroy() {
      this.destroyed = true;
    },
  };
}

describe('PlanCache', () => {
  it('returns the kept plan for a key and makes one only when absent', () => {
    const cache = new PlanCache<ReturnType<typeof fakePlan>>(2);
    const a = cache.get('a', () => fakePlan('a'));
    expect(cache.get('a', () => fakePlan('a again'))).toBe(a);
  });

  it('drops the least recently used plan past its capacity, without destroying it by default', () => {
    const cache = new PlanCache<ReturnType<typeof fakePlan>>(2);
    const a = cache.get('a', () => fakePlan('a'));
    const b = cache.get('b', () => fakePlan('b'));
    cache.get('a', () => fakePlan('a again')); // a is now the most recent: b goes next
    cache.get('c', () => fakePlan('c'));
    expect(cache.get('a', () => fakePlan('a again'))).toBe(a);
    expect(cache.get('b', () => fakePlan('b again')).name).toBe('b again');
    expect(b.destroyed).toBe(false);
  });

  it('destroys what it drops when asked to, and only that', () => {
    const cache = new PlanCache<ReturnType<typeof fakePlan>>(2, { destroyDropped: true });
    const a = cache.get('a', () => fakePlan('a'));
    const b = cache.get('b', () => fakePlan('b'));
    const c = cache.get('c', () => fakePlan('c'));
    expect([a.destroyed, b.destroyed, c.destroyed]).toEqual([true, false, false]);
    cache.destroyAll();
    expect([b.destroyed, c.destroyed]).toEqual([true, true]);
  });
});
