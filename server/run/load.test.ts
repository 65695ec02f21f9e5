/**
 * Load: 50 simulated workers on one run for 20 rounds; no round lost, memory stable. Figures are printed, not asserted
 * on time.
 */
import { describe, expect, it } from 'vitest';
import { measureLoad } from '../testing/load';

describe('load', () => {
  it('serves 50 workers for 20 rounds without losing a round', async () => {
    const figures = await measureLoad(50, 20, { scheme: 'terngrad' });
    console.log('[load]', JSON.stringify(figures));
    expect(figures.roundsClosed).toBe(20);
    expect(figures.fullRounds).toBe(20);
    expect(figures.serverErrors).toBe(0);
    // Generous: a leak of one model per worker per round would be ~400 MB by the end.
    expect(figures.heapEndMB - figures.heapEarlyMB).toBeLessThan(150);
  }, 300_000);
});
