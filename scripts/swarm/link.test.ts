/**
 * The link model slows a worker's rounds as predicted: one worker (the tab's
 * own session and channel) trains a run without a link, then a run whose
 * link is 1 Mbit/s up, 2 down, 100 ms latency. Each round of the second must
 * take longer by bytes·8/bandwidth + latency both ways (model down, gradient
 * up), within 20% of that prediction. The worker's own compute time, which
 * it reports and which varies by hundreds of ms with a shared machine's
 * load, is taken out of both runs' round times first. Round 0 is left out of both means: it also pays the
 * trainer's first-call warm-up.
 */
import { describe, expect, it } from 'vitest';
import { deliveryMs, symmetricLink, type LinkModel } from '../../core/traffic/linkModel';
import { socketChannelFactory } from '../../client/net/workerChannel';
import { memoryIdentity } from '../../client/net/workerIdentity';
import { quietSink, runWorkerSession } from '../../client/session/workerSession';
import { loadMnist } from '../../core/data';
import { createFileReader } from '../../server/data/fileReader';
import { waitFor } from '../../server/local';
import { inProcessServerPerFile } from './testing';

const sink = quietSink();

const server = inProcessServerPerFile();

const ROUNDS = 4;

async function meanRoundMs(
  link: LinkModel | null,
): Promise<{ meanOverheadMs: number; modelBytes: number; gradientBytes: number }> {
  const run = server().app.runs.create({
    name: `link ${link?.name ?? 'none'}`,
    // The float32 model every round: each round's download is round 0's, as the prediction below takes it.
    downlink: 'full',
    scheme: 'atomo-svd',
    budget: 2,
    shards: 1,
    maxRounds: ROUNDS,
    evalEvery: 1000,
    roundDeadlineMs: 60_000,
    link,
  });
  const data = await loadMnist(createFileReader());
  const session = await runWorkerSession({
    sink,
    backend: async () => ({ kind: 'cpu', reason: 'test' }),
    loadData: async () => data,
    identity: async () => memoryIdentity(),
    openChannel: socketChannelFactory({ url: server().url }),
    name: 'link',
    runId: run.id,
    showDigits: false,
  });
  try {
    await waitFor(() => run.summary().workers.some((w) => w.connected), 30_000, 'the worker to join');
    run.start();
    await waitFor(() => run.status === 'finished', 120_000, 'the run to finish');
    const history = run.history;
    return {
      // A round's time besides the worker's own compute and compression (which it reports, and which
      // varies with the machine's load between the runs): download, upload and the server's work.
      // Round 0 also pays the first-call warm-up of the trainer: left out.
      meanOverheadMs:
        history.slice(1).reduce((sum, m) => sum + m.durations.collectMs - m.workers[0]!.computeMs, 0) /
        (history.length - 1),
      modelBytes: history[0]!.bytesDown,
      gradientBytes: history.reduce((sum, m) => sum + m.bytesUp, 0) / history.length,
    };
  } finally {
    session.close();
  }
}

describe('link model in a worker session', () => {
  it('slows each round by the predicted transfer times, within 20%', { timeout: 180_000 }, async () => {
    const link: LinkModel = { ...symmetricLink(1, 100), name: 'test link', downlinkMbps: 2 };
    const plain = await meanRoundMs(null);
    const linked = await meanRoundMs(link);
    const predicted =
      deliveryMs(linked.modelBytes, link.downlinkMbps, link.latencyMs) +
      deliveryMs(linked.gradientBytes, link.uplinkMbps, link.latencyMs);
    expect(predicted).toBeGreaterThan(1500); // the float32 model alone is ~407 kB: 1.6 s at 2 Mbit/s
    const slowdown = linked.meanOverheadMs - plain.meanOverheadMs;
    expect(Math.abs(slowdown - predicted) / predicted).toBeLessThan(0.2);
  });
});
