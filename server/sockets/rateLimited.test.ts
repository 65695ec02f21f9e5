/**
 * A worker faster than the server's rate limit. The server refuses a message
 * over its rate (rate-limited) instead of queueing it; a refused gradient
 * used to be the end of the run: its round waited for it past the deadline
 * (no quorum), the worker waited for the next round, and neither moved
 * again (a lone tab on the default run stopped after ~150 rounds). The
 * worker now sends a refused request again after a token's time
 * (client/net/socket.ts, resendWhileRateLimited), so the run goes on at the
 * rate the server allows.
 */
import { describe, expect, it } from 'vitest';
import { HeadlessTab } from '../../client/net/headlessTab';
import { DEFAULT_RUN_ID } from '../app';
import { loadTestData, removeDataDir, startServer, waitFor } from '../testing/harness';

describe('a worker faster than the rate limit', () => {
  it('keeps training: its refused gradients are sent again and accepted', async () => {
    const { train } = await loadTestData();
    // 4 messages a second in bursts of 2: a worker whose rounds take a few milliseconds runs into it after its first
    // round.
    const server = await startServer({
      defaultRun: { scheme: 'none', batchSize: 8, maxRounds: 1000, evalEvery: 1000, roundDeadlineMs: 60_000 },
      rateLimit: { perSecond: 4, burst: 2 },
    });
    const worker = new HeadlessTab({ url: server.url, train });
    try {
      await worker.start();
      const run = server.app.runs.get(DEFAULT_RUN_ID)!;
      // 8 rounds need ~8 tokens, about 2 s at this rate; without the resend the run stops at version 1 or 2.
      await waitFor(() => worker.accepted.length >= 8, 20_000, '8 accepted gradients');
      expect(worker.accepted.slice(0, 8)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect(run.version).toBeGreaterThanOrEqual(8);
    } finally {
      worker.stop();
      await server.close();
      removeDataDir(server.dataDir);
    }
  });
});
