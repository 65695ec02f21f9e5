import { describe, expect, it } from 'vitest';
import { SCHEME_NAMES } from '../atomo/types';
import { createModelLayout, MODEL_KINDS } from '../model/layout';
import { matchedCompressions, matchedTargetBytes, solveBudget } from './budgets';
import { expectedBytes } from './sizes';

describe('budgets matched by bytes', () => {
  for (const kind of MODEL_KINDS) {
    const layout = createModelLayout(kind);

    it(`${kind}: matches every compressed scheme to TernGrad within 5% of its bytes`, () => {
      const compressions = matchedCompressions(layout, 32, SCHEME_NAMES);
      const target = matchedTargetBytes(layout, 32);
      expect(target).toBe(expectedBytes(layout, { scheme: 'terngrad', budget: 0, levels: 1 }, 32));
      for (const c of compressions.filter((c) => c.scheme !== 'none' && c.scheme !== 'powersgd')) {
        expect(Math.abs(expectedBytes(layout, c, 32) - target) / target, c.scheme).toBeLessThan(0.05);
      }
      // PowerSGD's rank is an integer: within half a rank's bytes of the target.
      const power = compressions.find((c) => c.scheme === 'powersgd')!;
      expect(Number.isInteger(power.budget)).toBe(true);
      const perRank =
        expectedBytes(layout, { ...power, budget: 1 }, 32) - expectedBytes(layout, { ...power, budget: 0 }, 32);
      expect(Math.abs(expectedBytes(layout, power, 32) - target)).toBeLessThanOrEqual(perRank / 2 + 1);
    });
  }

  it('solves the smallest budget that reaches the target, monotone in the target', () => {
    const layout = createModelLayout('mlp');
    const small = solveBudget(layout, 'atomo-svd', 10_000, 32);
    const large = solveBudget(layout, 'atomo-svd', 40_000, 32);
    expect(large).toBeGreaterThan(small);
    // Rounded to 3 significant digits, so within 0.5% of the target either way.
    expect(
      Math.abs(expectedBytes(layout, { scheme: 'atomo-svd', budget: small, levels: 1 }, 32) - 10_000),
    ).toBeLessThan(50);
    expect(expectedBytes(layout, { scheme: 'atomo-svd', budget: small * 0.95, levels: 1 }, 32)).toBeLessThan(10_000);
  });
});
