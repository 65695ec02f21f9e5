import { describe, expect, it } from 'vitest';
import { SCHEME_NAMES } from '../../../core/atomo/types';
import { createModelLayout } from '../../../core/model';
import { expectedBytes } from '../../../core/codec';
import { raceCompressions } from './race';

describe('race budgets', () => {
  const layout = createModelLayout('mlp');

  it('matches every compressed scheme to TernGrad within 5% of its bytes', () => {
    const compressions = raceCompressions(layout, 32);
    const target = expectedBytes(layout, { scheme: 'terngrad', budget: 0, levels: 1 }, 32);
    for (const c of compressions.filter((c) => c.scheme !== 'none' && c.scheme !== 'powersgd')) {
      expect(Math.abs(expectedBytes(layout, c, 32) - target) / target).toBeLessThan(0.05);
    }
    // PowerSGD's rank is an integer: within half a rank's bytes of the target.
    const power = compressions.find((c) => c.scheme === 'powersgd')!;
    expect(Number.isInteger(power.budget)).toBe(true);
    const perRank = expectedBytes(layout, { ...power, budget: 1 }, 32) - expectedBytes(layout, { ...power, budget: 0 }, 32);
    expect(Math.abs(expectedBytes(layout, power, 32) - target)).toBeLessThanOrEqual(perRank / 2 + 1);
  });

  it('gives one run per scheme, float32 far above the rest', () => {
    const compressions = raceCompressions(layout, 32);
    expect(new Set(compressions.map((c) => c.scheme)).size).toBe(SCHEME_NAMES.length);
    const dense = expectedBytes(layout, { scheme: 'none', budget: 0, levels: 1 }, 32);
    const tern = expectedBytes(layout, { scheme: 'terngrad', budget: 0, levels: 1 }, 32);
    expect(dense / tern).toBeGreaterThan(10);
  });
});
