/**
 * `npm run bench -- server [--workers 200] [--rounds 20]`: the aggregator
 * under load, beside raw socket.io on the same machine as the ceiling.
 *
 * How it is measured: the server runs on the main thread of this process;
 * the 200 simulated workers (HeadlessTab, the real protocol) run in 4
 * worker threads of 50, so their socket.io-client work does not share the
 * server's event loop. Each worker computes one honest gradient in round 0
 * and resends it afterwards (reuseGradient),
 * so the clock covers the aggregator: validation, decoding, averaging, the
 * SGD step and the model broadcast to 200 sockets. The ceiling is the same
 * 200 clients in the same 4 threads each sending the same bytes per round to
 * a bare socket.io server that acknowledges empty (upload ceiling) or with a
 * reply of the model's size (round-trip ceiling: the aggregator's traffic).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from 'socket.io';
import type { SchemeName } from '../../core/atomo/types';
import { asRunId } from '../../core/protocol';
import { removeDataDir, waitFor } from '../../server/local';
import { startInProcessServer } from '../swarm/aggregator';
import { startTsWorker } from '../../server/tsWorker';
import { nextMessage, startWorkerThreads } from '../swarm/threads';
import { fmt, loadText, suiteOptions, writeSection } from './report';
import type { RawThreadData } from './serverRawThread';

const THREADS = 4;

/** What the aggregator sustained with one scheme. */
interface AggregatorFigures {
  readonly scheme: SchemeName;
  readonly roundsPerSecond: number;
  readonly ingestMBps: number;
  readonly bytesPerWorker: number;
  /** Model bytes sent to each worker per round (round:open). */
  readonly downBytesPerWorker: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly fullRounds: number;
  readonly rounds: number;
  readonly heapMB: number;
  readonly rssMB: number;
  readonly serverErrors: number;
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function splitCounts(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0)).filter(
    (n) => n > 0,
  );
}

async function measureAggregator(workers: number, rounds: number, scheme: SchemeName): Promise<AggregatorFigures> {
  const server = await startInProcessServer();
  // Quorum of everyone and a long deadline: every round waits for all 200, so a round is the full fan-in.
  const run = server.app.runs.create({
    name: `bench ${scheme}`,
    scheme,
    batchSize: 8,
    maxRounds: rounds + 1,
    evalEvery: rounds + 1,
    roundDeadlineMs: 120_000,
    quorum: { fraction: 1, minimum: workers },
  });
  const threads = await startWorkerThreads(
    splitCounts(workers, THREADS).map((count, i) => ({
      url: server.url,
      runId: asRunId(run.id),
      count,
      backend: 'cpu',
      name: `load-${i}`,
    })),
    new URL('./loadThread.ts', import.meta.url),
  );
  run.start();
  // Round 0 computes the real gradients in the threads; the clock starts once it closed.
  await waitFor(() => run.history.length >= 1, 300_000, 'round 0');
  const started = performance.now();
  await waitFor(() => run.status === 'finished', 600_000, 'the measured rounds');
  const seconds = (performance.now() - started) / 1000;
  (globalThis as { gc?: () => void }).gc?.();
  const memory = process.memoryUsage();
  const measured = run.history.slice(1);
  const bytesUp = measured.reduce((sum, m) => sum + m.bytesUp, 0);
  const latencies = measured.map((m) => m.durations.totalMs).sort((a, b) => a - b);
  await threads.stop();
  await server.close();
  removeDataDir(server.dataDir);
  return {
    scheme,
    roundsPerSecond: measured.length / seconds,
    ingestMBps: bytesUp / 1e6 / seconds,
    bytesPerWorker: bytesUp / measured.length / workers,
    downBytesPerWorker: measured.reduce((sum, m) => sum + m.bytesDown, 0) / measured.length / workers,
    p50Ms: quantile(latencies, 0.5),
    p95Ms: quantile(latencies, 0.95),
    fullRounds: measured.filter((m) => m.contributors === workers).length,
    rounds: measured.length,
    heapMB: memory.heapUsed / 1e6,
    rssMB: memory.rss / 1e6,
    serverErrors: server.errors.length,
  };
}

/**
 * Rounds per second and upload MB/s of a bare socket.io server to which `workers`
 * clients each send `bytes` per round; it acknowledges with `replyBytes` of
 * binary (0: an empty ack; the model's size: the aggregator's traffic pattern).
 */
async function measureRaw(
  workers: number,
  rounds: number,
  bytes: number,
  replyBytes: number,
): Promise<{ roundsPerSecond: number; uploadMBps: number }> {
  const httpServer = createServer();
  const io = new Server(httpServer, { transports: ['websocket'], maxHttpBufferSize: 64 * 1024 * 1024 });
  const reply = new Uint8Array(replyBytes);
  io.on('connection', (socket) =>
    socket.on('blob', (_data: Uint8Array, ack: (reply?: Uint8Array) => void) => (replyBytes > 0 ? ack(reply) : ack())),
  );
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;
  const entry = new URL('./serverRawThread.ts', import.meta.url);
  const threads = splitCounts(workers, THREADS).map((count) =>
    startTsWorker(entry, { url, count, bytes } satisfies RawThreadData),
  );
  await Promise.all(threads.map((t) => nextMessage(t)));
  const round = () =>
    Promise.all(
      threads.map((t) => {
        const done = nextMessage(t);
        t.postMessage({ type: 'round' });
        return done;
      }),
    );
  await round(); // warm-up, as round 0 of the aggregator
  const started = performance.now();
  for (let r = 0; r < rounds; r++) await round();
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(
    threads.map(async (t) => {
      const stopped = nextMessage(t);
      t.postMessage({ type: 'stop' });
      await stopped;
      await t.terminate();
    }),
  );
  await new Promise<void>((resolve) => void io.close(() => resolve()));
  return { roundsPerSecond: rounds / seconds, uploadMBps: (workers * rounds * bytes) / 1e6 / seconds };
}

/** Runs the suite and writes its section of docs/benchmarks.md. */
export async function benchServer(): Promise<void> {
  const values = suiteOptions({
    workers: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '20' },
  });
  const workers = Number(values.workers);
  const rounds = Number(values.rounds);
  const loadBefore = loadText();
  const rows: string[][] = [];
  for (const scheme of ['atomo-svd', 'none'] as const) {
    const figures = await measureAggregator(workers, rounds, scheme);
    const bytes = Math.round(figures.bytesPerWorker);
    const upload = await measureRaw(workers, rounds, bytes, 0);
    const roundTrip = await measureRaw(workers, rounds, bytes, Math.round(figures.downBytesPerWorker));
    console.log(JSON.stringify({ ...figures, rawUpload: upload, rawRoundTrip: roundTrip }));
    rows.push([
      scheme,
      `${fmt(bytes / 1e3)} / ${fmt(figures.downBytesPerWorker / 1e3)}`,
      `${fmt(figures.roundsPerSecond)} (${fmt((100 * figures.roundsPerSecond) / roundTrip.roundsPerSecond)}%)`,
      `${fmt(figures.ingestMBps)} (${fmt((100 * figures.ingestMBps) / upload.uploadMBps)}%)`,
      `${fmt(figures.p50Ms)} / ${fmt(figures.p95Ms)}`,
      `${figures.fullRounds}/${figures.rounds}`,
      `${fmt(figures.heapMB)} / ${fmt(figures.rssMB)}`,
      String(figures.serverErrors),
    ]);
  }
  writeSection('server', {
    title: 'Aggregator under load',
    command: `npm run bench -- server --workers ${workers} --rounds ${rounds}`,
    loadBefore,
    how: [
      `${workers} simulated workers (the real protocol, HeadlessTab, in ${THREADS} worker threads) resend one ` +
        `precomputed MLP gradient every round to the aggregator on the main thread; ${rounds} rounds after a warm-up.`,
      'In brackets, the share of a bare socket.io server in the ' +
        'same place with the same clients and bytes: rounds/s of ' +
        "a round trip with a reply of the model's size, ingest of an upload acknowledged empty.",
      "Heap is the server thread's, RSS the whole process's. The model goes down to every worker each round, so with " +
        'compressed gradients the download bounds the round rate.',
    ],
    header: [
      'scheme',
      'kB up / down per worker-round',
      'rounds/s (of the bare ceiling)',
      'ingest MB/s (of the bare ceiling)',
      'round latency p50 / p95 ms',
      'full rounds',
      'heap / RSS MB',
      'server errors',
    ],
    rows,
  });
}
