/**
 * A tab paused while it trains faster than the server's rate limit. Its
 * leave is a message like any other, and the server refuses a message over
 * its rate instead of queueing it; the leave used to be sent once, so a
 * refused one was lost: the server kept the worker in the run, and every
 * round waited for its gradient until the deadline, round after round, until
 * the worker counted as dormant (a 320-round churn test spent 3 minutes
 * there). The leave is now sent again while it is refused
 * (client/net/socket.ts, requestLeave).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { socketChannelFactory } from '../../client/net/workerChannel';
import { memoryIdentity } from '../../client/net/workerIdentity';
import { quietSink, runWorkerSession } from '../../client/session/workerSession';
import { loadMnist, type MnistData } from '../../core/data';
import { createFileReader } from '../../server/data/fileReader';
import { removeDataDir, waitFor } from '../../server/local';
import { startInProcessServer } from './aggregator';

type Server = Awaited<ReturnType<typeof startInProcessServer>>;
let server: Server;
let data: MnistData;
beforeAll(async () => {
  data = await loadMnist(createFileReader());
  // One message a second, no burst: a worker whose rounds take milliseconds keeps its bucket empty (its refused
  // gradients are sent again every 50 ms and take each token as it comes), so a message sent once is refused.
  server = await startInProcessServer({ rateLimit: { perSecond: 1, burst: 1 } });
});
afterAll(async () => {
  await server.close();
  removeDataDir(server.dataDir);
});

it(
  'a worker paused at the rate limit leaves the run within seconds, not at the round deadline',
  { timeout: 60_000 },
  async () => {
    const run = server.app.runs.create({
      name: 'pause',
      scheme: 'none',
      batchSize: 8,
      maxRounds: 10_000,
      evalEvery: 100_000,
      roundDeadlineMs: 60_000,
    });
    const session = await runWorkerSession({
      sink: quietSink(),
      backend: async () => ({ kind: 'cpu', reason: 'test' }),
      loadData: async () => data,
      identity: async () => memoryIdentity(),
      openChannel: socketChannelFactory({ url: server.url }),
      name: 'a',
      runId: run.id,
      showDigits: false,
    });
    try {
      const worker = () => run.summary().workers.find((w) => w.name === 'a');
      await waitFor(() => worker()?.connected === true, 30_000, 'the worker to join');
      run.start();
      await waitFor(() => run.version >= 3, 30_000, 'three rounds at the rate limit');
      session.pause();
      await waitFor(() => worker()?.connected === false, 5_000, 'the paused worker to leave the run');
      // And it can come back: the resend stops once it has joined again.
      session.resume();
      await waitFor(() => worker()?.connected === true, 10_000, 'the worker to rejoin');
      const version = run.version;
      await waitFor(() => run.version >= version + 2, 20_000, 'two more rounds after the rejoin');
      expect(worker()?.connected).toBe(true);
    } finally {
      session.close();
    }
  },
);
