/**
 * `npm run bench -- soak [--workers 200] [--rounds 300] [--churn 0.1] [--seed 1] [--reuse] [--pace-ms 0] [--downlink
 * full]`:
 * the aggregator as a real server process (`server/index.ts`, as `npm start`
 * runs it) under a long class: `workers` simulated tabs (HeadlessTab, the
 * real protocol, honest gradients) in 4 worker threads of this process, a
 * `churn` fraction of them leaving every round (half of those come back with
 * their key, half are replaced by new tabs), one of them marked as an
 * attacker (sign-flipped ×10) by the teacher's socket, and one SIGTERM +
 * restart of the server process halfway, on the same port and data folder.
 * With `--reuse` each tab computes its honest gradient once and resends it
 * for every later version (the server's work per gradient is unchanged; the
 * tabs' is not done again), so that a 2-core machine can carry 200 tabs.
 * With `--pace-ms P` each tab waits P × U(0.5, 1.5) before each send, as a
 * student's device computing its gradient would (resent gradients are
 * otherwise sent at once, and rounds close faster than any class's);
 * `--downlink` sets the run's downlink (docs/protocol.md, "Downlink").
 * Every ten rounds it prints what a failed run needs to say why: tabs
 * connected and still joining, the slowest join and its phases, the
 * threads' and the server's load, and a fresh socket's connect time; a run
 * that stops early prints the tabs' refusals and the server's last output.
 *
 * It checks and reports: every version trained exactly once (no lost round,
 * across the restart too), the longest gap between two rounds closing (no
 * stalled run), the server's resident memory after warm-up (flat within 20%:
 * max/min over the samples of each process after its first sixth of the
 * rounds), every checkpoint on disk finite and valid (at the restart and at
 * the end), rounds per second, and the final test accuracy (the attacker is
 * held by the default rule). Not part of `npm test`: it takes minutes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { connectSocket } from '../../client/net/socket';
import { asRunId, asWorkerId, type DownlinkMode, type RoundMetrics, type RunId } from '../../core/protocol';
import { DOWNLINK_MODES } from '../../core/schema';
import { decodeCheckpoint } from '../../server/persistence/checkpoint';
import { makeDataDir, removeDataDir } from '../../server/local';
import { connectAdmin, type AdminClient } from '../swarm/admin';
import { startTsWorker } from '../../server/tsWorker';
import { nextMessage } from '../swarm/threads';
import { fmt, loadText, suiteOptions, writeSection } from './report';
import type { FromSoakThread, SoakThreadData, ToSoakThread } from './soakThread';

const THREADS = 4;
const ADMIN_TOKEN = 'soak-admin-token';
const DEADLINE_MS = 20_000;
/** Without a new round for this long (restart excluded) the run counts as stalled and the soak stops. */
const STALL_MS = 3 * DEADLINE_MS;

/** Whether `text` names a downlink mode (docs/protocol.md, "Downlink"). */
function isDownlinkMode(text: string): text is DownlinkMode {
  return (DOWNLINK_MODES as readonly string[]).includes(text);
}

/** A free TCP port on loopback. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** The server process: started, stopped with SIGTERM, its RSS read from /proc. */
class ServerProcess {
  #child: ChildProcess | null = null;
  #log = '';
  readonly errorLines: string[] = [];

  constructor(
    readonly port: number,
    readonly dataDir: string,
    readonly workers: number,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    // Node with tsx's loader in the same process, so the pid is the server's (SIGTERM and RSS reach it, not a wrapper).
    const child = spawn(process.execPath, ['--import', 'tsx', 'server/index.ts'], {
      env: {
        ...process.env,
        PORT: String(this.port),
        ADMIN_TOKEN,
        DATA_DIR: this.dataDir,
        // All the tabs are on this machine; departed ones expire after a minute, which the soak exercises too.
        MAX_WORKERS_PER_ADDRESS: String(10 * this.workers),
        MAX_WORKERS: String(100 * this.workers),
        WORKER_IDLE_HOURS: String(1 / 60),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#child = child;
    child.stdout?.on('data', (chunk: Buffer) => (this.#log = (this.#log + chunk.toString()).slice(-20_000)));
    child.stderr?.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      this.#log = (this.#log + text).slice(-20_000);
      for (const line of text.split('\n')) if (line.includes('[aggregator]')) this.errorLines.push(line.slice(0, 300));
    });
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode}):\n${this.#log}`);
      if (Date.now() > deadline) throw new Error(`no /api/health after 120 s:\n${this.#log}`);
      const ok = await fetch(`${this.url}/api/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** SIGTERM, as an operator stops it: the server checkpoints every run and exits. Resolves with its exit code. */
  async stop(): Promise<number | null> {
    const child = this.#child;
    if (child === null || child.exitCode !== null) return child?.exitCode ?? null;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const code = await exited;
    clearTimeout(timer);
    this.#child = null;
    return code;
  }

  /** The last `chars` characters of its stdout and stderr together. */
  logTail(chars = 4_000): string {
    return this.#log.slice(-chars);
  }

  /** CPU time (user + system) of the server process so far in seconds (Linux /proc), or NaN. */
  cpuSeconds(): number {
    const pid = this.#child?.pid;
    if (pid === undefined) return Number.NaN;
    try {
      // Fields 14 and 15 of /proc/<pid>/stat, after the parenthesised command name; in clock ticks (100 a second on
      // Linux).
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      return Number.NaN;
    }
  }

  /** Resident set size of the server process in MB (Linux /proc), or NaN. */
  rssMB(): number {
    const pid = this.#child?.pid;
    if (pid === undefined) return Number.NaN;
    try {
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      return match ? Number(match[1]) / 1024 : Number.NaN;
    } catch {
      return Number.NaN;
    }
  }
}

/**
 * Every run checkpoint in the data folder decodes (finite weights and momentum, valid JSON and shapes); returns how
 * many.
 */
function checkCheckpoints(dataDir: string): { files: number; bad: string[] } {
  const runsDir = join(dataDir, 'runs');
  const names = readdirSync(runsDir).filter((name) => name.endsWith('.ckpt') || name.endsWith('.ckpt.prev'));
  const bad: string[] = [];
  let skipped = 0;
  for (const name of names) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(join(runsDir, name));
    } catch {
      skipped++;
      continue; // renamed between readdir and read: the server is writing a newer one (temp file, then rename)
    }
    try {
      const { snapshot } = decodeCheckpoint(bytes);
      if (![...snapshot.params, ...snapshot.velocity].every(Number.isFinite)) bad.push(`${name}: not finite`);
    } catch (error) {
      bad.push(`${name}: ${(error as Error).message}`);
    }
  }
  return { files: names.length - skipped, bad };
}

function splitCounts(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0)).filter(
    (n) => n > 0,
  );
}

/** The run's history over HTTP (null while the server is down or busy). */
async function history(url: string, runId: RunId): Promise<readonly RoundMetrics[] | null> {
  try {
    const response = await fetch(`${url}/api/runs/${encodeURIComponent(runId)}/metrics.json`);
    if (!response.ok) return null;
    return ((await response.json()) as { history: RoundMetrics[] }).history;
  } catch {
    return null;
  }
}

/**
 * The run's version from GET /api/runs (null while the server is down or busy): the progress poll. Its answer stays
 * small, where metrics.json carries the whole history (every round's per-worker records), which at 200 tabs × 300
 * rounds is megabytes for the server to serialise at every poll.
 */
async function currentVersion(url: string, runId: RunId): Promise<number | null> {
  try {
    const response = await fetch(`${url}/api/runs`);
    if (!response.ok) return null;
    return (
      ((await response.json()) as { runId: string; version: number }[]).find((r) => r.runId === runId)?.version ?? null
    );
  } catch {
    return null;
  }
}

/**
 * How long a fresh socket from this (idle) thread takes to connect, in ms (NaN if it fails): the server's side of a
 * slow join.
 */
async function probeConnect(url: string): Promise<number> {
  const begun = performance.now();
  try {
    const socket = await connectSocket(url);
    socket.disconnect();
    return performance.now() - begun;
  } catch {
    return Number.NaN;
  }
}

/** RSS after warm-up of one server process: max / min over its samples once it trained its first sixth of rounds. */
function rssSpread(
  samples: readonly { round: number; mb: number }[],
  from: number,
): { min: number; max: number; ratio: number } {
  const kept = samples.filter((s) => s.round >= from && Number.isFinite(s.mb)).map((s) => s.mb);
  const min = Math.min(...kept);
  const max = Math.max(...kept);
  return { min, max, ratio: max / min };
}

/**
 * The teacher's socket, retried a few times: a server that has just restarted may be busy rejoining the class, and a
 * teacher reloading the dashboard would try again.
 */
async function connectAdminRetrying(url: string): Promise<AdminClient> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await connectAdmin(url, ADMIN_TOKEN);
    } catch (error) {
      if (attempt >= 5) throw error;
      console.error(`soak: teacher connection ${attempt} failed (${(error as Error).message}); trying again`);
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
  }
}

/**
 * Asks each thread to stop its tabs and waits for its report (at most `timeoutMs`; a thread that does not answer
 * reports nothing).
 */
function stopThreads(threads: readonly Worker[], timeoutMs: number): Promise<(FromSoakThread | null)[]> {
  return Promise.all(
    threads.map(
      (t) =>
        // A churn reply may still be in flight: wait for the thread's answer to 'stop' itself.
        new Promise<FromSoakThread | null>((resolve) => {
          const timer = setTimeout(() => {
            t.off('message', onReply);
            resolve(null);
          }, timeoutMs);
          const onReply = (m: FromSoakThread) => {
            if (m.type !== 'stopped' && m.type !== 'failed') return;
            clearTimeout(timer);
            t.off('message', onReply);
            resolve(m);
          };
          t.on('message', onReply);
          t.postMessage({ type: 'stop' } satisfies ToSoakThread);
        }),
    ),
  );
}

/** The tabs' refusals and failed joins, counted by message (ids and numbers folded), most frequent first. */
function summariseErrors(errors: readonly string[]): string[] {
  const counts = new Map<string, number>();
  for (const e of errors) {
    const key = e.replace(/\d+/g, 'N').slice(0, 200);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1]).map(([message, n]) => `${n} × ${message}`);
}

/** Runs the soak and writes its section of docs/benchmarks.md. */
export async function benchSoak(): Promise<void> {
  const values = suiteOptions({
    workers: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '300' },
    churn: { type: 'string', default: '0.1' },
    seed: { type: 'string', default: '1' },
    reuse: { type: 'boolean', default: false },
    downlink: { type: 'string', default: 'full' },
    'pace-ms': { type: 'string', default: '0' },
  });
  const workers = Number(values.workers);
  const rounds = Number(values.rounds);
  const churn = Number(values.churn);
  const seed = Number(values.seed);
  const reuse = values.reuse === true;
  const paceMs = Number(values['pace-ms']);
  if (!(paceMs >= 0 && paceMs <= DEADLINE_MS / 2)) throw new Error(`soak: --pace-ms in [0, ${DEADLINE_MS / 2}]`);
  const downlink = String(values.downlink);
  if (!isDownlinkMode(downlink)) throw new Error(`soak: --downlink is one of ${DOWNLINK_MODES.join(', ')}`);
  if (![workers, rounds, seed].every(Number.isInteger) || workers < 2 || rounds < 6 || !(churn >= 0 && churn < 1)) {
    throw new Error('soak: --workers ≥ 2, --rounds ≥ 6 (integers) and --churn in [0, 1)');
  }
  const loadBefore = loadavg();
  const dataDir = makeDataDir();
  const server = new ServerProcess(await freePort(), dataDir, workers);
  const threads: Worker[] = [];
  let admin: AdminClient | null = null;
  let threadsStopped = false;
  let completed = false;
  try {
    await server.start();
    admin = await connectAdmin(server.url, ADMIN_TOKEN);
    const run = await admin.createRun({
      name: 'soak',
      batchSize: 8,
      maxRounds: rounds,
      evalEvery: Math.max(1, Math.floor(rounds / 6)),
      roundDeadlineMs: DEADLINE_MS,
      seed,
      downlink,
    });
    const runId = asRunId(run.runId);
    const entry = new URL('./soakThread.ts', import.meta.url);
    for (const [thread, count] of splitCounts(workers, THREADS).entries()) {
      threads.push(
        startTsWorker(entry, { url: server.url, runId, count, thread, seed, reuse, paceMs } satisfies SoakThreadData),
      );
    }
    const joined = await Promise.all(threads.map((t) => nextMessage<FromSoakThread>(t)));
    const failed = joined.find((m) => m.type !== 'joined');
    if (failed)
      throw new Error(`a soak thread failed to join: ${failed.type === 'failed' ? failed.message : failed.type}`);
    const attacker = asWorkerId((joined[0] as Extract<FromSoakThread, { type: 'joined' }>).workerIds[0]!);
    const churnLog: Extract<FromSoakThread, { type: 'churned' }>[] = [];
    /** Each thread's latest churn report: connected tabs and joins in flight. */
    const latest = threads.map(() => ({
      connected: 0,
      joining: 0,
      slowestJoinMs: 0,
      slowestOpenMs: 0,
      slowestConnectMs: 0,
      loopDelayMs: 0,
      connectErrors: 0,
      lastConnectError: null as string | null,
    }));
    threads.forEach((t, i) =>
      t.on('message', (m: FromSoakThread) => {
        if (m.type !== 'churned') return;
        churnLog.push(m);
        const before = latest[i]!;
        const slower = m.slowestJoinMs > before.slowestJoinMs;
        latest[i] = {
          connected: m.connected,
          joining: m.joining,
          slowestJoinMs: slower ? m.slowestJoinMs : before.slowestJoinMs,
          slowestOpenMs: slower ? m.slowestOpenMs : before.slowestOpenMs,
          slowestConnectMs: slower ? m.slowestConnectMs : before.slowestConnectMs,
          loopDelayMs: Math.max(before.loopDelayMs, m.loopDelayMs),
          connectErrors: before.connectErrors + m.connectErrors,
          lastConnectError: m.lastConnectError ?? before.lastConnectError,
        };
      }),
    );
    await admin.setAttack(attacker, { kind: 'sign-flip', factor: 10 });
    await admin.startRun(runId);
    console.log(
      `soak: ${workers} workers, ${rounds} rounds, churn ${churn}, attacker ${attacker}, server pid on :${server.port}`,
    );

    const started = performance.now();
    const rss: { process: 0 | 1; round: number; mb: number }[] = [];
    let seen = 0;
    let lastProgress = performance.now();
    let restartAt = -1;
    let restart: {
      stoppedAt: number;
      exitCode: number | null;
      checkpoints: ReturnType<typeof checkCheckpoints>;
      restoredVersion: number;
      downMs: number;
    } | null = null;
    let stalled = false;
    let checkpointReads = 0;
    const checkpointsBad: string[] = [];
    let processIndex: 0 | 1 = 0;
    /** The slowest answer to the poll's GET since the last progress line: how busy the server's event loop is. */
    let slowestPollMs = 0;
    let lastProbeMs = Number.NaN;
    let lastCpu = { seconds: server.cpuSeconds(), at: performance.now() };
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const asked = performance.now();
      const version = await currentVersion(server.url, runId);
      slowestPollMs = Math.max(slowestPollMs, performance.now() - asked);
      if (version === null) continue;
      if (version > seen) {
        const tens = Math.floor(seen / 10);
        for (let r = seen; r < version; r++)
          for (const t of threads) t.postMessage({ type: 'churn', fraction: churn } satisfies ToSoakThread);
        seen = version;
        lastProgress = performance.now();
        rss.push({ process: processIndex, round: seen, mb: server.rssMB() });
        if (Math.floor(seen / 10) > tens) {
          // Every ten rounds, while the server runs, every checkpoint file on disk is read back and checked.
          const check = checkCheckpoints(dataDir);
          checkpointReads += check.files;
          checkpointsBad.push(...check.bad);
          const tabs = latest.map((l) => `${l.connected}+${l.joining}`).join(' ');
          const slowest = latest.reduce((a, b) => (b.slowestJoinMs > a.slowestJoinMs ? b : a));
          const loopDelay = Math.max(...latest.map((l) => l.loopDelayMs));
          // The probe started at the previous line: it must not hold up this loop (a slow connect would skip rounds).
          const probeMs = lastProbeMs;
          void probeConnect(server.url).then((ms) => (lastProbeMs = ms));
          const cpu = server.cpuSeconds();
          const cpuShare = (cpu - lastCpu.seconds) / ((performance.now() - lastCpu.at) / 1000);
          lastCpu = { seconds: cpu, at: performance.now() };
          const connectErrors = latest.reduce((sum, l) => sum + l.connectErrors, 0);
          const lastConnectError = latest.find((l) => l.lastConnectError !== null)?.lastConnectError ?? 'none';
          console.log(
            `round ${seen}/${rounds}, server RSS ${fmt(server.rssMB())} MB, tabs connected+joining per ` +
              `thread ${tabs}, slowest join ${fmt(slowest.slowestJoinMs / 1000)} s (WebSocket open ` +
              `after ${fmt(slowest.slowestOpenMs / 1000)} s, ` +
              `connected after ${fmt(slowest.slowestConnectMs / 1000)} s), slowest ` +
              `poll ${fmt(slowestPollMs / 1000)} s, threads' longest loop delay ${fmt(loopDelay / 1000)} s, ` +
              `a fresh socket ` +
              `from the bench's main thread ${fmt(probeMs / 1000)} s, server CPU ${fmt(100 * cpuShare)}% of a ` +
              `core, failed connection attempts ${connectErrors} (${lastConnectError}), load ${fmt(loadavg()[0]!)}`,
          );
          for (const l of latest)
            Object.assign(l, {
              slowestJoinMs: 0,
              slowestOpenMs: 0,
              slowestConnectMs: 0,
              loopDelayMs: 0,
              connectErrors: 0,
              lastConnectError: null,
            });
          slowestPollMs = 0;
        }
      }
      if (restart === null && seen >= Math.floor(rounds / 2)) {
        // Halfway: the operator stops the server (SIGTERM) and starts it again on the same port and data.
        restartAt = seen;
        const stoppedAt = performance.now();
        const exitCode = await server.stop();
        const checkpoints = checkCheckpoints(dataDir);
        const stored = decodeCheckpoint(readFileSync(join(dataDir, 'runs', `${runId}.ckpt`))).snapshot.version;
        await server.start();
        processIndex = 1;
        lastCpu = { seconds: server.cpuSeconds(), at: performance.now() }; // a new process: its CPU time starts at 0
        // The server closed the teacher's socket for good ('io server disconnect'): the teacher reconnects, and marks
        // the
        // attacker again, since the attack lives with the server process, not in checkpoints.
        admin.close();
        admin = await connectAdminRetrying(server.url);
        await admin.setAttack(attacker, { kind: 'sign-flip', factor: 10 });
        restart = { stoppedAt, exitCode, checkpoints, restoredVersion: stored, downMs: performance.now() - stoppedAt };
        console.log(
          `restarted: exit code ${exitCode}, checkpoint at version ${stored}, ` +
            `last seen ${seen}, ${checkpoints.files} checkpoint files`,
        );
        lastProgress = performance.now();
      }
      if (seen >= rounds) break;
      if (performance.now() - lastProgress > STALL_MS) {
        stalled = true;
        console.error(`soak: no round for ${STALL_MS / 1000} s at round ${seen}: stalled`);
        break;
      }
    }
    const seconds = (performance.now() - started) / 1000;
    const loadAfter = loadavg();

    threadsStopped = true;
    const replies = (await stopThreads(threads, 60_000)).map(
      (r) => r ?? ({ type: 'failed', message: 'the thread did not answer stop' } as const),
    );
    for (const t of threads) await t.terminate();
    console.log('soak: tabs stopped; stopping the server');
    const clientErrors = replies.flatMap((r) =>
      r.type === 'stopped' ? r.errors : r.type === 'failed' ? [r.message] : [],
    );
    const accepted = replies.reduce((sum, r) => sum + (r.type === 'stopped' ? r.accepted : 0), 0);
    const retried = replies.reduce((sum, r) => sum + (r.type === 'stopped' ? r.retried : 0), 0);
    const sentBeforeRejoin = replies.reduce((sum, r) => sum + (r.type === 'stopped' ? r.sentBeforeRejoin : 0), 0);
    // The whole history once, at the end (the server is idle now): what every check below reads.
    let finalHistory: readonly RoundMetrics[] | null = null;
    for (let attempt = 0; finalHistory === null && attempt < 10; attempt++) {
      finalHistory = await history(server.url, runId);
      if (finalHistory === null) await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    if (finalHistory === null) throw new Error('soak: could not read the run history at the end');
    const status = (
      await fetch(`${server.url}/api/runs`).then(
        (r) => r.json() as Promise<{ runId: string; status: string; fault: string | null }[]>,
      )
    ).find((r) => r.runId === runId);
    admin.close();
    admin = null;
    const exitCode = await server.stop();
    const finalCheckpoints = checkCheckpoints(dataDir);

    const versions = finalHistory.map((m) => m.version);
    const distinct = new Set(versions).size;
    const missing = rounds - new Set(versions.filter((v) => Number.isInteger(v) && v >= 0 && v < rounds)).size;
    const repeated = versions.length - distinct;
    const lost = versions.length !== rounds || versions.some((v, i) => v !== i);
    const gaps = finalHistory
      .slice(1)
      .map((m, i) => ({ version: m.version, ms: m.closedAt - finalHistory[i]!.closedAt }));
    // The first version the restarted process closes; its gap is the restart's, not a stall.
    const restartVersion = restart?.restoredVersion ?? -1;
    const longestGap = Math.max(...gaps.filter((g) => g.version !== restartVersion).map((g) => g.ms));
    const restartGap = gaps.find((g) => g.version === restartVersion)?.ms ?? Number.NaN;
    const warm = Math.ceil(rounds / 12);
    const first = rssSpread(
      rss.filter((s) => s.process === 0),
      warm,
    );
    const second = rssSpread(
      rss.filter((s) => s.process === 1),
      restartVersion + warm,
    );
    const lastEval = [...finalHistory].reverse().find((m) => m.testAccuracy !== null);
    const contributors = finalHistory.map((m) => m.contributors);
    const totals = churnLog.reduce(
      (sum, c) => ({ left: sum.left + c.left, fresh: sum.fresh + c.fresh, rejoined: sum.rejoined + c.rejoined }),
      {
        left: 0,
        fresh: 0,
        rejoined: 0,
      },
    );
    const figures = {
      workers,
      rounds,
      churn,
      seconds,
      roundsPerSecond: finalHistory.length / seconds,
      lost,
      missing,
      repeated,
      stalled,
      longestGapMs: longestGap,
      restartGapMs: restartGap,
      restart,
      rss: { first, second },
      finalCheckpoints,
      checkpointReads,
      checkpointsBad,
      exitCode,
      status: status === undefined ? null : { status: status.status, fault: status.fault },
      accuracy: lastEval?.testAccuracy ?? null,
      contributors: { min: Math.min(...contributors), max: Math.max(...contributors) },
      churned: totals,
      accepted,
      retried,
      sentBeforeRejoin,
      clientErrors: clientErrors.length,
      serverErrorLines: server.errorLines.length,
      load: { before: loadBefore, after: loadAfter },
    };
    console.log(JSON.stringify(figures, null, 1));
    const thin = finalHistory
      .filter((m) => m.contributors < workers / 10)
      .map((m) => `${m.version}: ${m.contributors}`);
    console.log(
      `rounds with fewer than ${workers / 10} contributors (version: contributors): ${thin.join(', ') || 'none'}`,
    );
    for (const line of [...summariseErrors(clientErrors).slice(0, 10), ...server.errorLines.slice(0, 10)])
      console.log(`  ${line}`);

    const yes = (ok: boolean) => (ok ? 'yes' : '**no**');
    // Each round a `churn` share leaves and the last round's leavers come back: a class that holds together keeps
    // about (1 − churn) of its tabs connected, and one whose rejoins hang dwindles by (1 − churn) a round.
    const connectedAtEnd = latest.reduce((sum, l) => sum + l.connected, 0);
    const joiningAtEnd = latest.reduce((sum, l) => sum + l.joining, 0);
    const passes = {
      classHeld: connectedAtEnd >= (1 - 2 * churn) * workers,
      lost: !lost,
      stalled: !stalled && longestGap < DEADLINE_MS,
      rss: first.ratio <= 1.2 && second.ratio <= 1.2,
      checkpoints:
        finalCheckpoints.bad.length === 0 &&
        checkpointsBad.length === 0 &&
        (restart?.checkpoints.bad.length ?? 1) === 0,
    };
    // The two modes keep a section each: a full-size run needs --reuse on a small machine, an honest one is smaller.
    const flags = [
      `--workers ${workers} --rounds ${rounds} --churn ${churn}`,
      reuse ? ' --reuse' : '',
      paceMs > 0 ? ` --pace-ms ${paceMs}` : '',
      downlink === 'full' ? '' : ` --downlink ${downlink}`,
    ];
    const gradients = reuse
      ? 'each resending the gradient of its first round (--reuse)'
      : 'each computing its gradient';
    const wait = `${fmt(paceMs / 2000)}–${fmt((1.5 * paceMs) / 1000)} s`;
    const pace = paceMs > 0 ? `, each waiting ${wait} before a send` : '';
    writeSection(reuse ? 'soak' : 'soak-honest', {
      title:
        `Soak, ${reuse ? 'gradients resent' : 'every gradient computed'}: ` +
        `a long class with churn, an attacker, a restart`,
      command: `npm run bench -- soak ${flags.join('')}`,
      loadBefore: loadText(loadBefore),
      how: [
        `A real server process on loopback; ${workers} simulated tabs (MLP, spectral ATOMO, batch 8, the ${downlink} ` +
          `downlink, ${gradients}${pace}) in ${THREADS} worker ` +
          `threads; every round ${churn * 100}% of the tabs leave, ` +
          "half of the last round's leavers come back with their key and half as new tabs.",
        `One tab is marked sign-flipped ×10 (the norm bound ` +
          `holds it); after ${restartVersion} rounds the server gets ` +
          'SIGTERM and starts again on the same data folder, the tabs rejoin by themselves and the teacher marks the ' +
          'attacker again.',
        `Warm-up is each process's first ${warm} rounds (RSS sampled as each round closes). One run; the tabs share ` +
          'the machine with the server; no network between them.',
      ],
      header: ['check', 'result', 'passes'],
      rows: [
        [
          `every version trained exactly once (0..${rounds - 1}): rounds recorded, versions missing, versions repeated`,
          `${finalHistory.length}; ${missing}; ${repeated}`,
          yes(passes.lost),
        ],
        [
          'restart: exit code, version restored vs last seen',
          restart === null
            ? 'no restart'
            : `${restart.exitCode}; checkpoint at ${restart.restoredVersion}, ${restartAt} seen before the stop`,
          yes(restart !== null && restart.exitCode === 0 && restart.restoredVersion >= restartAt),
        ],
        [
          'longest gap between rounds (restart excluded) vs the 20 s deadline',
          `${fmt(longestGap / 1000)} s`,
          yes(passes.stalled),
        ],
        ['gap across the restart (stop, start, rejoin)', `${fmt(restartGap / 1000)} s`, '–'],
        [
          'server RSS after warm-up, min–max (max/min), before / after the restart',
          `${fmt(first.min)}–${fmt(first.max)} MB (${fmt(first.ratio)}) ` +
            `/ ${fmt(second.min)}–${fmt(second.max)} MB (${fmt(second.ratio)})`,
          yes(passes.rss),
        ],
        [
          'checkpoint files read back and valid and finite (every ' +
            '10 rounds while running / at the restart / at the end)',
          `${checkpointReads} / ${restart?.checkpoints.files ?? 0} / ${finalCheckpoints.files} files, ` +
            `${checkpointsBad.length + (restart?.checkpoints.bad.length ?? 0) + finalCheckpoints.bad.length} bad`,
          yes(passes.checkpoints),
        ],
        [
          'run at the end',
          `${status?.status ?? '?'}${status?.fault ? ` (fault: ${status.fault})` : ''}`,
          yes(status?.status === 'finished'),
        ],
        ['rounds/s (wall, restart included)', fmt(finalHistory.length / seconds), '–'],
        ['contributors per round, min–max', `${Math.min(...contributors)}–${Math.max(...contributors)}`, '–'],
        [
          `tabs connected at the end, and joins still in flight, vs at least ${fmt(100 * (1 - 2 * churn))}% of ` +
            `the ${workers} connected (a round's leavers and the last round's returners away)`,
          `${connectedAtEnd}; ${joiningAtEnd}`,
          yes(passes.classHeld),
        ],
        [
          'tabs that left / came back with their key / new',
          `${totals.left} / ${totals.rejoined} / ${totals.fresh}`,
          '–',
        ],
        [
          `test accuracy at the last evaluation (attacker ` +
            `held${reuse ? '; reused gradients do not train a model, so low' : ''})`,
          figures.accuracy === null ? '–' : `${fmt(100 * figures.accuracy)}%`,
          '–',
        ],
        [
          'gradients accepted; joins retried (cut off by the restart); gradients a ' +
            'socket queued while the server was down and sent before its rejoin (refused ' +
            'not-joined); other refusals than join/leave races; server error lines',
          `${accepted}; ${retried}; ${sentBeforeRejoin}; ${clientErrors.length}; ${server.errorLines.length}`,
          yes(clientErrors.length === 0 && server.errorLines.length === 0),
        ],
      ],
    });
    completed = true;
  } finally {
    if (!completed) {
      // A run that did not finish says why: what the tabs were refused, which joins failed, what the server logged.
      const replies = threadsStopped ? [] : await stopThreads(threads, 10_000);
      const errors = replies.flatMap((r) =>
        r?.type === 'stopped' ? r.errors : r?.type === 'failed' ? [r.message] : [],
      );
      console.error(`soak did not finish; the tabs' refusals and failed joins (${errors.length}):`);
      for (const line of summariseErrors(errors).slice(0, 20)) console.error(`  ${line}`);
      console.error(
        `server error lines: ${server.errorLines.length}; the server's output, last lines:\n${server.logTail()}`,
      );
    }
    admin?.close();
    for (const t of threads) await t.terminate();
    await server.stop();
    removeDataDir(dataDir);
  }
}
