/**
 * The load measurement of server/run/load.test.ts (`npm run bench -- server`
 * measures the same at scale, in worker threads): N simulated workers on one run for
 * R rounds. Each worker computes one honest gradient and resends it for every
 * version (reuseGradient), so the figures are the aggregator's: validation,
 * decoding, averaging, the SGD step, and the model broadcast.
 */
import type { RunConfigPatch } from '../../core/protocol';
import { loadTestData, removeDataDir, startServer, waitFor } from './harness';
import { HeadlessTab } from '../../client/net/headlessTab';

/** What one load run measured. */
export interface LoadFigures {
  readonly workers: number;
  readonly rounds: number;
  readonly scheme: string;
  /** Rounds closed, and those with every worker contributing. */
  readonly roundsClosed: number;
  readonly fullRounds: number;
  readonly seconds: number;
  readonly roundsPerSecond: number;
  /** Gradient bytes accepted per second of wall time, in MB (10⁶ bytes). */
  readonly ingestMBps: number;
  readonly bytesUp: number;
  readonly bytesDown: number;
  /** Heap after the first quarter of the rounds and at the end (MB), after a GC when exposed. */
  readonly heapEarlyMB: number;
  readonly heapEndMB: number;
  readonly rssEndMB: number;
  readonly serverErrors: number;
}

function heapMB(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / 1e6;
}

/** Runs the load scenario and returns its figures. */
export async function measureLoad(workers: number, rounds: number, patch: RunConfigPatch = {}): Promise<LoadFigures> {
  const { train } = await loadTestData();
  const server = await startServer({ defaultRun: false });
  const run = server.app.runs.create({
    scheme: 'none',
    batchSize: 8,
    maxRounds: rounds,
    evalEvery: rounds,
    roundDeadlineMs: 120_000,
    ...patch,
  });
  const simulated = Array.from(
    { length: workers },
    () => new HeadlessTab({ url: server.url, train, runId: run.id, reuseGradient: true }),
  );
  await Promise.all(simulated.map((w) => w.start()));
  // Round 0 computes the real gradients; the clock starts once it is done.
  run.start();
  await waitFor(() => run.history.length >= 1, 120_000, 'round 0');
  const started = performance.now();
  let heapEarlyMB = 0;
  const early = Math.max(1, Math.floor(rounds / 4));
  await waitFor(
    () => {
      if (heapEarlyMB === 0 && run.history.length > early) heapEarlyMB = heapMB();
      return run.status === 'finished';
    },
    600_000,
    'the load run to finish',
  );
  const seconds = (performance.now() - started) / 1000;
  const measured = run.history.slice(1);
  const bytesUp = measured.reduce((sum, m) => sum + m.bytesUp, 0);
  const figures: LoadFigures = {
    workers,
    rounds,
    scheme: run.config.scheme,
    roundsClosed: run.history.length,
    fullRounds: run.history.filter((m) => m.contributors === workers).length,
    seconds,
    roundsPerSecond: measured.length / seconds,
    ingestMBps: bytesUp / 1e6 / seconds,
    bytesUp,
    bytesDown: measured.reduce((sum, m) => sum + m.bytesDown, 0),
    heapEarlyMB,
    heapEndMB: heapMB(),
    rssEndMB: process.memoryUsage().rss / 1e6,
    serverErrors: server.errors.length,
  };
  for (const w of simulated) w.stop();
  await server.close();
  removeDataDir(server.dataDir);
  return figures;
}
