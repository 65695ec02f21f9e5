import { describe, expect, it } from 'vitest';
import { SCHEME_NAMES } from '../../../core/atomo/types';
import { createModelLayout } from '../../../core/model';
import { expectedBytes } from '../../../core/codec';
import { raceCompressions } from './race';

describe('race budgets', () => {
  const layout = createModelLayout('mlp');

  it('gives one run per scheme, float32 far above the rest', () => {
    const compressions = raceCompressions(layout, 32);
    expect(new Set(compressions.map((c) => c.scheme)).size).toBe(SCHEME_NAMES.length);
    const dense = expectedBytes(layout, { scheme: 'none', budget: 0, levels: 1 }, 32);
    const tern = expectedBytes(layout, { scheme: 'terngrad', budget: 0, levels: 1 }, 32);
    expect(dense / tern).toBeGreaterThan(10);
  });
});
