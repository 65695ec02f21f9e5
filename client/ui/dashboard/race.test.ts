import { describe, expect, it } from 'vitest';
import { createModelLayout } from '../../../core/model';
import { expectedRoundBytes, raceCompressions } from './race';

describe('race budgets', () => {
  const layout = createModelLayout('mlp');

  it('matches every compressed scheme to TernGrad within 5% of its bytes', () => {
    const compressions = raceCompressions(layout, 32);
    const target = expectedRoundBytes(layout, { scheme: 'terngrad', budget: 0, levels: 1 }, 32);
    for (const c of compressions.filter((c) => c.scheme !== 'none')) {
      expect(Math.abs(expectedRoundBytes(layout, c, 32) - target) / target).toBeLessThan(0.05);
    }
  });

  it('gives one run per scheme, float32 far above the rest', () => {
    const compressions = raceCompressions(layout, 32);
    expect(new Set(compressions.map((c) => c.scheme)).size).toBe(5);
    const dense = expectedRoundBytes(layout, { scheme: 'none', budget: 0, levels: 1 }, 32);
    const tern = expectedRoundBytes(layout, { scheme: 'terngrad', budget: 0, levels: 1 }, 32);
    expect(dense / tern).toBeGreaterThan(10);
  });

  it('agrees with the wire-format worked example for one 784×128 layer', () => {
    const one = { ...layout, tensors: [layout.tensors[0]!] };
    expect(expectedRoundBytes(one, { scheme: 'atomo-svd', budget: 4, levels: 1 }, 32)).toBe(14_624);
    expect(expectedRoundBytes(one, { scheme: 'qsgd', budget: 0, levels: 4 }, 32)).toBe(50_198);
    expect(expectedRoundBytes(one, { scheme: 'terngrad', budget: 0, levels: 1 }, 32)).toBe(25_104);
  });
});
