import { describe, expect, it } from 'vitest';
import { createModelLayout } from '../../../core/model';
import { expectedBytes } from '../../../core/codec';
import { raceCompressions } from './race';

describe('race budgets', () => {
  const layout = createModelLayout('mlp');

  it('matches every compressed scheme to TernGrad within 5% of its bytes', () => {
    const compressions = raceCompressions(layout, 32);
    const target = expectedBytes(layout, { scheme: 'terngrad', budget: 0, levels: 1 }, 32);
    for (const c of compressions.filter((c) => c.scheme !== 'none')) {
      expect(Math.abs(expectedBytes(layout, c, 32) - target) / target).toBeLessThan(0.05);
    }
  });

  it('gives one run per scheme, float32 far above the rest', () => {
    const compressions = raceCompressions(layout, 32);
    expect(new Set(compressions.map((c) => c.scheme)).size).toBe(5);
    const dense = expectedBytes(layout, { scheme: 'none', budget: 0, levels: 1 }, 32);
    const tern = expectedBytes(layout, { scheme: 'terngrad', budget: 0, levels: 1 }, 32);
    expect(dense / tern).toBeGreaterThan(10);
  });
});
