/**
 * `npm run bench -- server [--workers 200] [--rounds 20] [--modes full,relay,…] [--schemes atomo-svd,none]`: the
 * aggregator under load with every downlink mode (DOWNLINK_MODES), each beside raw socket.io on the same machine as
 * the ceiling, and where the server's time goes.
 *
 * How it is measured: the server runs on the main thread of this process;
 * the simulated workers (HeadlessTab, the real protocol) run in 4 worker
 * threads, so their socket.io-client work does not share the server's event
 * loop. Each worker computes one honest gradient in round 0 and resends it
 * afterwards (reuseGradient), so the clock covers the aggregator:
 * validation, decoding, combining, the SGD step and round:open to every
 * socket. The ceiling is the same clients in the same 4 threads each sending
 * the same bytes per round to a bare socket.io server that replies with as
 * many bytes as the aggregator sent each worker (a round trip of the same
 * traffic). The phases are each round's durations (RoundDurations): decode,
 * combine, step, building round:open and emitting it; the rest of a round's
 * wall time is socket.io's receiving and acks, metering, garbage collection
 * and waiting for the workers.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from 'socket.io';
import type { SchemeName } from '../../core/atomo/types';
import { asRunId, type DownlinkMode } from '../../core/protocol';
import { DOWNLINK_MODES } from '../../core/schema';
import { removeDataDir, waitFor } from '../../server/local';
import { startInProcessServer } from '../swarm/aggregator';
import { startTsWorker } from '../../server/tsWorker';
import { nextMessage, startWorkerThreads } from '../swarm/threads';
import { fmt, loadText, suiteOptions, writeSection } from './report';
import type { RawThreadData } from './serverRawThread';

const THREADS = 4;

/** Per round, the mean of each server phase (RoundDurations), ms. */
interface Phases {
  readonly decodeMs: number;
  readonly combineMs: number;
  readonly stepMs: number;
  readonly downlinkMs: number;
  readonly emitMs: number;
}

/** What the aggregator sustained with one scheme and downlink mode. */
interface AggregatorFigures {
  readonly scheme: SchemeName;
  readonly mode: DownlinkMode;
  readonly phases: Phases;
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

async function measureAggregator(
  workers: number,
  rounds: number,
  scheme: SchemeName,
  mode: DownlinkMode,
): Promise<AggregatorFigures> {
  const server = await startInProcessServer();
  // Quorum of everyone and a long deadline: every round waits for all the workers, so a round is the full fan-in.
  const run = server.app.runs.create({
    name: `bench ${scheme} ${mode}`,
    scheme,
    downlink: mode,
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
  const mean = (field: keyof Phases) =>
    measured.reduce((sum, m) => sum + (m.durations[field] ?? 0), 0) / Math.max(1, measured.length);
  const phases: Phases = {
    decodeMs: mean('decodeMs'),
    combineMs: mean('combineMs'),
    stepMs: mean('stepMs'),
    downlinkMs: mean('downlinkMs'),
    emitMs: mean('emitMs'),
  };
  await threads.stop();
  await server.close();
  removeDataDir(server.dataDir);
  return {
    scheme,
    mode,
    phases,
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

/** A comma-separated option as a list of the allowed values, or throws naming the first unknown one. */
function listOption<T extends string>(raw: unknown, allowed: readonly T[], what: string): T[] {
  const items = String(raw)
    .split(',')
    .filter((x) => x.length > 0);
  const unknown = items.find((x) => !(allowed as readonly string[]).includes(x));
  if (unknown !== undefined) throw new Error(`unknown ${what} '${unknown}'; known: ${allowed.join(', ')}`);
  return items as T[];
}

/** One measured setting: the aggregator and the bare round trip of its traffic. */
interface Measured {
  readonly figures: AggregatorFigures;
  readonly ceiling: number;
}

/** The table of rounds a second by downlink. */
function roundsTable(measured: readonly Measured[]): string[][] {
  return measured.map(({ figures, ceiling }) => [
    `${figures.scheme}, ${figures.mode}`,
    `${fmt(figures.bytesPerWorker / 1e3)} / ${fmt(figures.downBytesPerWorker / 1e3)}`,
    `${fmt(figures.roundsPerSecond)} (${fmt((100 * figures.roundsPerSecond) / ceiling)}%)`,
    fmt(ceiling),
    `${fmt(figures.p50Ms)} / ${fmt(figures.p95Ms)}`,
    `${figures.fullRounds}/${figures.rounds}`,
    `${fmt(figures.heapMB)} / ${fmt(figures.rssMB)}`,
    String(figures.serverErrors),
  ]);
}

/** The table of where a round's server time goes: each phase's ms a round, and per gradient where it scales. */
function phasesTable(measured: readonly Measured[], workers: number): string[][] {
  return measured.map(({ figures }) => {
    const p = figures.phases;
    const wallMs = 1000 / figures.roundsPerSecond;
    const rest = wallMs - p.decodeMs - p.combineMs - p.stepMs - p.downlinkMs - p.emitMs;
    const perGradient = (ms: number) => `${fmt(ms)} (${fmt((1000 * ms) / workers)} µs)`;
    return [
      `${figures.scheme}, ${figures.mode}`,
      fmt(wallMs),
      perGradient(p.decodeMs),
      perGradient(p.combineMs),
      fmt(p.stepMs),
      `${fmt(p.downlinkMs)} / ${fmt(p.emitMs)}`,
      `${fmt(rest)} (${fmt((100 * rest) / wallMs)}%)`,
    ];
  });
}

/** Runs the suite and writes its two sections of docs/benchmarks.md. */
export async function benchServer(): Promise<void> {
  const values = suiteOptions({
    workers: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '20' },
    modes: { type: 'string', default: DOWNLINK_MODES.join(',') },
    schemes: { type: 'string', default: 'atomo-svd,none' },
  });
  const workers = Number(values.workers);
  const rounds = Number(values.rounds);
  const modes = listOption(values.modes, DOWNLINK_MODES, 'downlink mode');
  const schemes = listOption<SchemeName>(values.schemes, ['atomo-svd', 'none'], 'scheme');
  const loadBefore = loadText();
  const measured: Measured[] = [];
  for (const scheme of schemes) {
    for (const mode of modes) {
      const figures = await measureAggregator(workers, rounds, scheme, mode);
      const bytes = Math.round(figures.bytesPerWorker);
      const roundTrip = await measureRaw(workers, rounds, bytes, Math.round(figures.downBytesPerWorker));
      console.log(JSON.stringify({ ...figures, rawRoundTrip: roundTrip }));
      measured.push({ figures, ceiling: roundTrip.roundsPerSecond });
    }
  }
  const defaults = values.modes === DOWNLINK_MODES.join(',') && values.schemes === 'atomo-svd,none';
  const command =
    `npm run bench -- server --workers ${workers} --rounds ${rounds}` +
    (defaults ? '' : ` --modes ${modes.join(',')} --schemes ${schemes.join(',')}`);
  // The default count keeps the sections other docs cite; another count gets its own pair beside them.
  const suffix = workers === 200 ? '' : `-${workers}`;
  const titled = (title: string) => (workers === 200 ? title : `${title}, ${workers} workers`);
  writeSection(`server${suffix}`, {
    title: titled('Aggregator under load'),
    command,
    loadBefore,
    how: [
      `${workers} simulated workers (the real protocol, HeadlessTab, in ${THREADS} worker threads) resend one ` +
        `precomputed MLP gradient every round to the aggregator on the main thread; ${rounds} rounds after a warm-up.`,
      'In brackets, the share of the ceiling: a bare socket.io server in the same place with the same clients, ' +
        'each sending the same bytes up and getting as many down as the aggregator sent it (the round trip).',
      "Heap is the server thread's, RSS the whole process's. Under `relay` a round forwards every gradient; larger " +
        'than the model, it goes down as the full model.',
    ],
    header: [
      'scheme, downlink',
      'kB up / down per worker-round',
      'rounds/s (of the round-trip ceiling)',
      'ceiling rounds/s',
      'round latency p50 / p95 ms',
      'full rounds',
      'heap / RSS MB',
      'server errors',
    ],
    rows: roundsTable(measured),
  });
  writeSection(`server-phases${suffix}`, {
    title: titled("Where the aggregator's time goes"),
    command,
    loadBefore,
    how: [
      `The same runs as "${titled('Aggregator under load')}": each phase's mean ms a round from the rounds' ` +
        'durations (RoundDurations), in brackets per gradient; a round is 1 / (rounds/s).',
      'Decode: validation, decoding and the statistics as each gradient arrives; combine: the exact sum at the ' +
        "close; step: SGD (and the `atomo` downlink's compression); round:open: building the messages / emitting them.",
      "The rest: socket.io's receiving, parsing and acks, frame metering, garbage collection and waiting for workers.",
    ],
    header: [
      'scheme, downlink',
      'round ms',
      'decode ms',
      'combine ms',
      'step ms',
      'round:open build / emit ms',
      'rest ms',
    ],
    rows: phasesTable(measured, workers),
  });
}
