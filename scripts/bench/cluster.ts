/**
 * `npm run bench -- cluster [--rounds 3] [--workers 200,600] [--processes 1,2,3]`:
 * the aggregator as one process and as a cluster of 2 and 3 (docs/scaling.md),
 * each started for real as `npm start` starts it (`server/index.ts
 * [--processes N]`, the cluster with its own Redis), with simulated workers
 * in 4 worker threads of this process resending one precomputed honest
 * atomo-svd gradient every round (as `bench -- server` does). It measures
 * rounds per second, ingest, and the CPU seconds every aggregator process
 * spent per gradient (from /proc), and, in this process, the CPU cost of each
 * stage a gradient goes through, for the model in docs/scaling.md.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { addPartial, planSum } from '../../core/aggregation';
import { encodeLayer } from '../../core/codec';
import { createModelLayout } from '../../core/model/layout';
import {
  asModelVersion,
  asRunId,
  asWorkerId,
  type GradientSubmission,
  type RoundMetrics,
  type RunSummary,
} from '../../core/protocol';
import { DEFAULT_RUN_CONFIG } from '../../core/schema';
import type { RoundEstimate } from '../../core/training/roundEstimate';
import { seededRng } from '../../core/testing/seeded';
import { connectSocket } from '../../client/net/socket';
import { Bus } from '../../server/cluster/bus';
import type { ContribHeader } from '../../server/cluster/messages';
import { startRedisServer } from '../../server/cluster/redisServer';
import { decodeGradient, parseSubmission } from '../../server/protocol/validation';
import { getJson, launchAggregator, stopAggregator } from '../cluster/launch';
import { startWorkerThreads } from '../swarm/threads';
import { fmt, loadText, suiteOptions, writeSection } from './report';

const THREADS = 4;
/** This project's benchmark ports (3650-3699). */
const PORT = 3680;
const REDIS_PORT = 3681;
const TOKEN = 'bench-cluster-token';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** CPU seconds (user + system) a process has used, from /proc. */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/**
 * What the processes' logs and the tabs said about churn (server/cluster/health.ts's lines), over the whole
 * configuration.
 */
interface Churn {
  /** Leaders elected (the first one included). */
  readonly elections: number;
  readonly leasesLost: number;
  /** Processes the leader wrote off, and heartbeats found lapsed. */
  readonly writtenOff: number;
  readonly lapsed: number;
  /** Sockets the servers saw close, by reason. */
  readonly closed: Record<string, number>;
  readonly rejoins: number;
  readonly callTimeouts: number;
  /** Longest event-loop delay any aggregator process logged (ms). */
  readonly maxLoopDelayMs: number;
  /** Connections the tabs lost, and reconnections recovered. */
  readonly tabDisconnects: number;
  readonly tabRecoveries: number;
}

/** Redis's own counters over the measured rounds (INFO stats). */
interface RedisTraffic {
  readonly inMB: number;
  readonly outMB: number;
  readonly commands: number;
  readonly peakMemoryMB: number;
}

/** Counts the event and count lines of one configuration's output. */
function countChurn(output: string, tabs: { disconnects: number; recoveries: number }): Churn {
  const closed: Record<string, number> = {};
  let rejoins = 0;
  let callTimeouts = 0;
  let maxLoopDelayMs = 0;
  const stats = new RegExp(
    String.raw`stats \d+ s: sockets \+\d+ \(recovered \d+\) -\d+ \[([^\]]*)\]; joins \d+ \(rejoins (\d+)\); ` +
      String.raw`calls \d+ \(timed out (\d+)\).*event loop delay max (\d+) ms`,
    'g',
  );
  for (const match of output.matchAll(stats)) {
    for (const part of match[1]!.split(', ').filter(Boolean)) {
      const at = part.lastIndexOf(' ');
      closed[part.slice(0, at)] = (closed[part.slice(0, at)] ?? 0) + Number(part.slice(at + 1));
    }
    rejoins += Number(match[2]);
    callTimeouts += Number(match[3]);
    maxLoopDelayMs = Math.max(maxLoopDelayMs, Number(match[4]));
  }
  const count = (pattern: RegExp) => output.match(pattern)?.length ?? 0;
  return {
    elections: count(/ leads \(term /g),
    leasesLost: count(/lost the leader lease/g),
    writtenOff: count(/stopped beating/g),
    lapsed: count(/heartbeat had lapsed/g),
    closed,
    rejoins,
    callTimeouts,
    maxLoopDelayMs,
    tabDisconnects: tabs.disconnects,
    tabRecoveries: tabs.recoveries,
  };
}

async function redisInfo(redis: Redis): Promise<Record<string, number>> {
  const text = await redis.info();
  return Object.fromEntries(
    text
      .split('\r\n')
      .map((line) => line.split(':'))
      .filter((parts) => parts.length === 2 && /^[\d.]+$/.test(parts[1]!))
      .map(([key, value]) => [key!, Number(value)]),
  );
}

interface EndToEnd {
  readonly processes: number;
  readonly workers: number;
  /** Why it did not finish, when it did not. */
  readonly failed?: string;
  readonly log: string;
  readonly churn: Churn;
  readonly redis: RedisTraffic | null;
  readonly roundsPerSecond: number;
  readonly ingestMBps: number;
  /** Aggregator CPU (all processes) per accepted gradient, ms; and the leader's part. */
  readonly cpuMsPerGradient: number;
  readonly leaderCpuMsPerGradient: number;
  readonly fullRounds: number;
  readonly rounds: number;
  /** The run's summary (what run:state carries) as JSON, kB. */
  readonly summaryKB: number;
}

function splitCounts(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0)).filter(
    (n) => n > 0,
  );
}

/** Where each configuration's whole output goes (results/ is not committed). */
const LOG_DIR = 'results/bench-cluster';
/** A configuration that makes no round in this long has failed (ms). */
const STALL_MS = 180_000;

/** One configuration, started and stopped for real; its output (every process's log) is kept in LOG_DIR. */
async function measureEndToEnd(
  processes: number,
  workers: number,
  rounds: number,
  cpuProf: string | undefined,
): Promise<EndToEnd> {
  const dataDir = mkdtempSync(join(tmpdir(), 'atomo-bench-cluster-'));
  const namespace = `bench-${processes}-${workers}`;
  const url = `http://127.0.0.1:${PORT}`;
  const server = launchAggregator({
    processes,
    port: PORT,
    redisPort: REDIS_PORT,
    dataDir,
    adminToken: TOKEN,
    namespace,
    maxWorkersPerAddress: 10 * workers,
    ...(cpuProf === undefined
      ? {}
      : { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${join(cpuProf, `${processes}x${workers}`)}`] }),
  });
  let output = '';
  server.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  server.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  mkdirSync(LOG_DIR, { recursive: true });
  const log = join(LOG_DIR, `${processes}x${workers}.log`);
  let tabs = { disconnects: 0, recoveries: 0 };
  const redis = processes > 1 ? new Redis(`redis://127.0.0.1:${REDIS_PORT}`, { lazyConnect: true }) : null;
  redis?.on('error', () => undefined);
  let threads: Awaited<ReturnType<typeof startWorkerThreads>> | null = null;
  let failed: string | undefined;
  let result: Omit<EndToEnd, 'churn' | 'log'> = {
    processes,
    workers,
    roundsPerSecond: NaN,
    ingestMBps: NaN,
    cpuMsPerGradient: NaN,
    leaderCpuMsPerGradient: NaN,
    fullRounds: 0,
    rounds: 0,
    summaryKB: NaN,
    redis: null,
  };
  try {
    await getJson(`${url}/api/health`);
    await redis?.connect();
    const admin = await connectSocket(url, { adminToken: TOKEN });
    // A warm-up round, then the measured ones.
    const maxRounds = rounds + 1;
    const created = await admin.timeout(30_000).emitWithAck('run:create', {
      name: `bench ${processes}×${workers}`,
      scheme: 'atomo-svd',
      batchSize: 8,
      maxRounds,
      evalEvery: rounds + 1,
      roundDeadlineMs: 300_000,
      quorum: { fraction: 1, minimum: workers },
    });
    if (!created.ok) throw new Error(created.error.message);
    const runId = created.run.runId;
    threads = await startWorkerThreads(
      splitCounts(workers, THREADS).map((count, i) => ({
        url,
        runId,
        count,
        backend: 'cpu' as const,
        name: `bench-${i}`,
      })),
      new URL('./loadThread.ts', import.meta.url),
    );
    await admin.timeout(30_000).emitWithAck('run:start', { runId });
    admin.disconnect();
    const history = async () =>
      (await getJson<{ history: RoundMetrics[] }>(`${url}/api/runs/${runId}/metrics.json`)).history;
    while ((await history()).length < 1) await sleep(250);
    const pids =
      redis === null
        ? [server.pid!]
        : (await redis.keys(`${namespace}:proc:*`)).map((key) => Number(key.split(':proc:')[1]!.split('.')[0]));
    const leaderPid = redis === null ? server.pid! : Number((await redis.get(`${namespace}:leader`))!.split('.')[0]);
    const cpuBefore = pids.map(cpuSeconds);
    const infoBefore = redis === null ? null : await redisInfo(redis);
    // Polled on the small history route, twice a second: /api/runs lists every worker, and in a cluster a follower
    // fetches it from the leader through Redis, so polling it often would add to what is measured.
    let lastRounds = 1;
    let lastProgress = performance.now();
    for (;;) {
      const closed = (await history()).length;
      if (closed >= maxRounds) break;
      if (closed > lastRounds) {
        lastRounds = closed;
        lastProgress = performance.now();
      } else if (performance.now() - lastProgress > STALL_MS) {
        throw new Error(`no round closed in ${STALL_MS / 1000} s (stuck after ${lastRounds} rounds)`);
      }
      await sleep(500);
    }
    const cpuAfter = pids.map(cpuSeconds);
    const infoAfter = redis === null ? null : await redisInfo(redis);
    const delta = (key: string) => (infoAfter?.[key] ?? 0) - (infoBefore?.[key] ?? 0);
    const all = await history();
    const measured = all.slice(1);
    // From the warm-up round's close to the last one's, on the server's clock.
    const seconds = (all[all.length - 1]!.closedAt - all[0]!.closedAt) / 1000;
    const summary = (await getJson<RunSummary[]>(`${url}/api/runs`)).find((r) => r.runId === runId);
    const gradients = measured.reduce((sum, m) => sum + m.contributors, 0);
    const cpu = cpuAfter.reduce((sum, c, i) => sum + c - cpuBefore[i]!, 0);
    const leaderIndex = pids.indexOf(leaderPid);
    result = {
      processes,
      workers,
      roundsPerSecond: measured.length / seconds,
      ingestMBps: measured.reduce((sum, m) => sum + m.bytesUp, 0) / 1e6 / seconds,
      cpuMsPerGradient: (1000 * cpu) / gradients,
      leaderCpuMsPerGradient: (1000 * (cpuAfter[leaderIndex]! - cpuBefore[leaderIndex]!)) / gradients,
      fullRounds: measured.filter((m) => m.contributors === workers).length,
      rounds: measured.length,
      summaryKB: JSON.stringify(summary ?? null).length / 1000,
      redis:
        infoAfter === null
          ? null
          : {
              inMB: delta('total_net_input_bytes') / 1e6,
              outMB: delta('total_net_output_bytes') / 1e6,
              commands: delta('total_commands_processed'),
              peakMemoryMB: (infoAfter['used_memory_peak'] ?? 0) / 1e6,
            },
    };
  } catch (error) {
    failed = (error as Error).message;
  } finally {
    tabs = (await threads?.stop().catch(() => null)) ?? tabs;
    redis?.disconnect();
    await stopAggregator(server);
    rmSync(dataDir, { recursive: true, force: true });
    writeFileSync(log, output);
  }
  return { ...result, ...(failed === undefined ? {} : { failed }), log, churn: countChurn(output, tabs) };
}

/**
 * Median CPU time (user + system of this process, ms) of `fn` over `reps`
 * runs after one warm-up: on a machine shared with other work the wall clock
 * counts the others' time too, CPU time only ours. `fn` is synchronous and
 * this process runs no other thread while it runs.
 */
function cpuMs(fn: () => void, reps = 9): number {
  fn();
  const times: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t = process.cpuUsage();
    fn();
    const used = process.cpuUsage(t);
    times.push((used.user + used.system) / 1000);
  }
  return times.sort((a, b) => a - b)[reps >> 1]!;
}

/** What one gradient costs at each stage, measured here on the MLP with atomo-svd at budget 2. */
async function measureStages(): Promise<{ name: string; perMessageMs: number; note: string }[]> {
  const layout = createModelLayout('mlp');
  const config = { ...DEFAULT_RUN_CONFIG, scheme: 'atomo-svd' as const, budget: 2 };
  const rng = seededRng(9);
  const count = 50;
  const submissions = Array.from({ length: count }, (_, w): GradientSubmission => ({
    runId: 'bench' as GradientSubmission['runId'],
    workerId: (w + 1) as GradientSubmission['workerId'],
    version: 0 as GradientSubmission['version'],
    layers: layout.tensors.map((t, layer) => {
      const [rows, cols] = t.shape;
      const k = Math.min(2, rows, cols);
      const fill = (n: number) => Float32Array.from({ length: n }, () => rng() - 0.5);
      return encodeLayer(
        { scheme: 'atomo-svd', shape: t.shape, count: k, u: fill(k * rows), v: fill(k * cols), scales: fill(k) },
        layer,
      );
    }),
    loss: 1,
    layerStats: layout.tensors.map(() => ({ closedForm: 0, realised: 0, gradientNormSq: 1 })),
    computeMs: 1,
  }));
  const estimates: RoundEstimate[] = [];
  const ingestMs = cpuMs(() => {
    estimates.length = 0;
    for (const raw of submissions) estimates.push(decodeGradient(parseSubmission(raw), layout, config).estimate);
  }, 5);
  const plan = planSum(
    { kind: 'norm-bound', k: 3 },
    estimates.map((e) => e.stats),
  );
  const sum = new Float64Array(layout.parameterCount);
  const accumulateMs = cpuMs(() => estimates.forEach((e, i) => e.accumulate(sum, plan.weights[i]!, plan)), 5);
  const combineMs = cpuMs(() => addPartial(sum, sum.slice()));

  // Redis: one process's reports (about 600 bytes of JSON each) and one partial sum (8 bytes per parameter).
  const dataDir = mkdtempSync(join(tmpdir(), 'atomo-bench-bus-'));
  const redisServer = await startRedisServer(dataDir, REDIS_PORT);
  const clients = Array.from({ length: 4 }, () => new Redis(redisServer.url));
  const received: { n: number; bytes: number } = { n: 0, bytes: 0 };
  const a = new Bus({
    commands: clients[0]!,
    reader: clients[1]!,
    namespace: 'bench',
    processId: 'a',
    onError: () => undefined,
  });
  const b = new Bus({
    commands: clients[2]!,
    reader: clients[3]!,
    namespace: 'bench',
    processId: 'b',
    onError: () => undefined,
  });
  await a.start(() => undefined);
  await b.start((message) => {
    received.n += 1;
    received.bytes += message.blobs.reduce((s, blob) => s + blob.byteLength, 0);
  });
  const report: ContribHeader = {
    t: 'contrib',
    term: 1,
    runId: asRunId('bench'),
    version: asModelVersion(0),
    workerId: asWorkerId(1),
    loss: 1,
    layerStats: submissions[0]!.layerStats,
    bytesUp: 9000,
    computeMs: 1,
    stats: estimates[0]!.stats,
    at: 0,
    decodeMs: 1,
    multiplier: 1,
  };
  const through = async (n: number, blob: Buffer | null) => {
    received.n = 0;
    const t = performance.now();
    await Promise.all(Array.from({ length: n }, () => a.send('b', report, blob === null ? [] : [blob])));
    while (received.n < n) await sleep(1);
    return (performance.now() - t) / n;
  };
  await through(200, null);
  const reportMs = await through(2000, null);
  const partial = Buffer.alloc(8 * layout.parameterCount);
  await through(3, partial);
  const partialMs = await through(20, partial);
  a.stop();
  b.stop();
  for (const c of clients) c.disconnect();
  await redisServer.stop();
  rmSync(dataDir, { recursive: true, force: true });
  return [
    {
      name: 'validate + decode + flatten + statistics (each process, per gradient)',
      perMessageMs: ingestMs / count,
      note: 'the same work one process does, plus the statistics',
    },
    {
      name: 'report to the leader through Redis (per gradient)',
      perMessageMs: reportMs,
      note: 'XADD + XREAD of one ~600-byte header, pipelined, sender to receiver',
    },
    {
      name: 'fixed-point accumulate into the partial sum (per gradient)',
      perMessageMs: accumulateMs / count,
      note: `${layout.parameterCount} parameters`,
    },
    {
      name: 'partial sum through Redis (per process and round)',
      perMessageMs: partialMs,
      note: `${fmt((8 * layout.parameterCount) / 1e6)} MB binary`,
    },
    {
      name: 'leader adds one partial sum (per process and round)',
      perMessageMs: combineMs,
      note: 'exact integer addition in float64',
    },
  ];
}

/** Runs the suite and writes its section of docs/benchmarks.md. */
export async function benchCluster(): Promise<void> {
  const values = suiteOptions({
    rounds: { type: 'string', default: '3' },
    workers: { type: 'string', default: '200,600' },
    processes: { type: 'string', default: '1,2,3' },
    /** A directory for every aggregator process's CPU profile (node --cpu-prof), one folder per configuration. */
    'cpu-prof': { type: 'string' },
    /** Measure and print, but leave docs/benchmarks.md alone (a diagnostic run). */
    'no-report': { type: 'boolean', default: false },
  });
  const rounds = Number(values.rounds);
  const loadBefore = loadText();
  const stages = values['no-report'] === true ? [] : await measureStages();
  console.log(JSON.stringify(stages));
  const rows: EndToEnd[] = [];
  for (const workers of String(values.workers).split(',').map(Number)) {
    for (const processes of String(values.processes).split(',').map(Number)) {
      const figures = await measureEndToEnd(processes, workers, rounds, values['cpu-prof'] as string | undefined);
      console.log(JSON.stringify({ ...figures, load: loadText() }));
      rows.push(figures);
    }
  }
  if (values['no-report'] === true) return;
  const stageText = stages.map((stage) => `${stage.name} ${fmt(stage.perMessageMs)} ms`).join('; ');
  writeSection('cluster', {
    title: 'Several aggregator processes',
    command: `npm run bench -- cluster --workers ${values.workers} --processes ${values.processes} --rounds ${rounds}`,
    loadBefore,
    how: [
      'Each configuration started as `npm start` starts it ' +
        '(`--processes N` with its own Redis for N > 1); simulated tabs ' +
        `in ${THREADS} worker threads resend one atomo-svd MLP gradient every round; ${rounds} rounds after a warm-up.`,
      'CPU per gradient: user + system time of every aggregator ' +
        "process (the leader's in brackets) over the gradients " +
        "accepted; events from the processes' own lines " +
        '(server/cluster/health.ts); Redis traffic from its INFO counters.',
      `Stage costs in this process (medians, docs/scaling.md turns them into a model): ${stageText}.`,
    ],
    header: [
      'processes',
      'workers',
      'rounds/s',
      'ingest MB/s',
      'CPU per gradient ms (leader)',
      'full rounds',
      'elections / leases lost / written off',
      'Redis in / out MB per round',
    ],
    rows: rows.map((r) =>
      r.failed === undefined
        ? [
            String(r.processes),
            String(r.workers),
            fmt(r.roundsPerSecond),
            fmt(r.ingestMBps),
            r.processes === 1
              ? fmt(r.cpuMsPerGradient)
              : `${fmt(r.cpuMsPerGradient)} (${fmt(r.leaderCpuMsPerGradient)})`,
            `${r.fullRounds}/${r.rounds}`,
            r.processes === 1
              ? '(one process)'
              : `${r.churn.elections} / ${r.churn.leasesLost} / ${r.churn.writtenOff}`,
            r.redis === null || r.rounds === 0
              ? '—'
              : `${fmt(r.redis.inMB / r.rounds)} / ${fmt(r.redis.outMB / r.rounds)}`,
          ]
        : [String(r.processes), String(r.workers), '—', '—', '—', `failed: ${r.failed}`, '—', '—'],
    ),
  });
}
