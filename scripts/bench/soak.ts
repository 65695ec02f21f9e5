/**
 * `npm run bench -- soak [--workers 200] [--rounds 300] [--churn 0.1] [--seed 1] [--reuse]`:
 * the aggregator as a real server process (`server/index.ts`, as `npm start`
 * runs it) under a long class: `workers` simulated tabs (SimulatedWorker, the
 * real protocol, honest gradients) in 4 worker threads of this process, a
 * `churn` fraction of them leaving every round (half of those come back with
 * their key, half are replaced by new tabs), one of them marked as an
 * attacker (sign-flipped ×10) by the teacher's socket, and one SIGTERM +
 * restart of the server process halfway, on the same port and data folder.
 * With `--reuse` each tab computes its honest gradient once and resends it
 * for every later version (the server's work per gradient is unchanged; the
 * tabs' is not done again), so that a 2-core machine can carry 200 tabs.
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
import { parseArgs } from 'node:util';
import type { Worker } from 'node:worker_threads';
import { asRunId, asWorkerId, type RoundMetrics, type RunId } from '../../core/protocol';
import { decodeCheckpoint } from '../../server/checkpoint';
import { makeDataDir, removeDataDir } from '../../server/local';
import { connectAdmin, type AdminClient } from '../swarm/admin';
import { startTsWorker } from '../../server/tsWorker';
import { nextMessage } from '../swarm/threads';
import { fmt, markdownTable, writeSection } from './report';
import type { FromSoakThread, SoakThreadData, ToSoakThread } from './soakThread';

const THREADS = 4;
const ADMIN_TOKEN = 'soak-admin-token';
const DEADLINE_MS = 20_000;
/** Without a new round for this long (restart excluded) the run counts as stalled and the soak stops. */
const STALL_MS = 3 * DEADLINE_MS;

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

/** Every run checkpoint in the data folder decodes (finite weights and momentum, valid JSON and shapes); returns how many. */
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
  return Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0)).filter((n) => n > 0);
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

/** RSS after warm-up of one server process: max / min over its samples once it trained its first sixth of rounds. */
function rssSpread(samples: readonly { round: number; mb: number }[], from: number): { min: number; max: number; ratio: number } {
  const kept = samples.filter((s) => s.round >= from && Number.isFinite(s.mb)).map((s) => s.mb);
  const min = Math.min(...kept);
  const max = Math.max(...kept);
  return { min, max, ratio: max / min };
}

/** Runs the soak and writes its section of docs/benchmarks.md. */
export async function benchSoak(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    allowPositionals: true,
    options: {
      workers: { type: 'string', default: '200' },
      rounds: { type: 'string', default: '300' },
      churn: { type: 'string', default: '0.1' },
      seed: { type: 'string', default: '1' },
      reuse: { type: 'boolean', default: false },
    },
    strict: false,
  });
  const workers = Number(values.workers);
  const rounds = Number(values.rounds);
  const churn = Number(values.churn);
  const seed = Number(values.seed);
  const reuse = values.reuse === true;
  if (![workers, rounds, seed].every(Number.isInteger) || workers < 2 || rounds < 6 || !(churn >= 0 && churn < 1)) {
    throw new Error('soak: --workers ≥ 2, --rounds ≥ 6 (integers) and --churn in [0, 1)');
  }
  const loadBefore = loadavg();
  const dataDir = makeDataDir();
  const server = new ServerProcess(await freePort(), dataDir, workers);
  const threads: Worker[] = [];
  let admin: AdminClient | null = null;
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
    });
    const runId = asRunId(run.runId);
    const entry = new URL('./soakThread.ts', import.meta.url);
    for (const [thread, count] of splitCounts(workers, THREADS).entries()) {
      threads.push(startTsWorker(entry, { url: server.url, runId, count, thread, seed, reuse } satisfies SoakThreadData));
    }
    const joined = await Promise.all(threads.map((t) => nextMessage<FromSoakThread>(t)));
    const failed = joined.find((m) => m.type !== 'joined');
    if (failed) throw new Error(`a soak thread failed to join: ${failed.type === 'failed' ? failed.message : failed.type}`);
    const attacker = asWorkerId((joined[0] as Extract<FromSoakThread, { type: 'joined' }>).workerIds[0]!);
    const churnLog: { left: number; rejoined: number; fresh: number; connected: number }[] = [];
    for (const t of threads) t.on('message', (m: FromSoakThread) => (m.type === 'churned' ? churnLog.push(m) : undefined));
    await admin.setAttack(attacker, { kind: 'sign-flip', factor: 10 });
    await admin.startRun(runId);
    console.log(`soak: ${workers} workers, ${rounds} rounds, churn ${churn}, attacker ${attacker}, server pid on :${server.port}`);

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
    let finalHistory: readonly RoundMetrics[] = [];
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const current = await history(server.url, runId);
      if (current === null) continue;
      finalHistory = current;
      if (current.length > seen) {
        const tens = Math.floor(seen / 10);
        for (let r = seen; r < current.length; r++) for (const t of threads) t.postMessage({ type: 'churn', fraction: churn } satisfies ToSoakThread);
        seen = current.length;
        lastProgress = performance.now();
        rss.push({ process: processIndex, round: seen, mb: server.rssMB() });
        if (Math.floor(seen / 10) > tens) {
          // Every ten rounds, while the server runs, every checkpoint file on disk is read back and checked.
          const check = checkCheckpoints(dataDir);
          checkpointReads += check.files;
          checkpointsBad.push(...check.bad);
          console.log(`round ${seen}/${rounds}, server RSS ${fmt(server.rssMB())} MB, ${churnLog.at(-1)?.connected ?? '?'} tabs in thread 0`);
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
        // The server closed the teacher's socket for good ('io server disconnect'): the teacher reconnects, and marks the
        // attacker again, since the attack lives with the server process, not in checkpoints.
        admin.close();
        admin = await connectAdmin(server.url, ADMIN_TOKEN);
        await admin.setAttack(attacker, { kind: 'sign-flip', factor: 10 });
        restart = { stoppedAt, exitCode, checkpoints, restoredVersion: stored, downMs: performance.now() - stoppedAt };
        console.log(`restarted: exit code ${exitCode}, checkpoint at version ${stored}, last seen ${seen}, ${checkpoints.files} checkpoint files`);
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

    const replies = await Promise.all(
      threads.map(
        (t) =>
          // A churn reply may still be in flight: wait for the thread's answer to 'stop' itself.
          new Promise<FromSoakThread>((resolve) => {
            const onReply = (m: FromSoakThread) => {
              if (m.type !== 'stopped' && m.type !== 'failed') return;
              t.off('message', onReply);
              resolve(m);
            };
            t.on('message', onReply);
            t.postMessage({ type: 'stop' } satisfies ToSoakThread);
          }),
      ),
    );
    for (const t of threads) await t.terminate();
    console.log('soak: tabs stopped; stopping the server');
    const clientErrors = replies.flatMap((r) => (r.type === 'stopped' ? r.errors : r.type === 'failed' ? [r.message] : []));
    const accepted = replies.reduce((sum, r) => sum + (r.type === 'stopped' ? r.accepted : 0), 0);
    const retried = replies.reduce((sum, r) => sum + (r.type === 'stopped' ? r.retried : 0), 0);
    const status = (await fetch(`${server.url}/api/runs`).then((r) => r.json() as Promise<{ runId: string; status: string; fault: string | null }[]>)).find(
      (r) => r.runId === runId,
    );
    admin.close();
    admin = null;
    const exitCode = await server.stop();
    const finalCheckpoints = checkCheckpoints(dataDir);

    const versions = finalHistory.map((m) => m.version);
    const distinct = new Set(versions).size;
    const missing = rounds - new Set(versions.filter((v) => Number.isInteger(v) && v >= 0 && v < rounds)).size;
    const repeated = versions.length - distinct;
    const lost = versions.length !== rounds || versions.some((v, i) => v !== i);
    const gaps = finalHistory.slice(1).map((m, i) => ({ version: m.version, ms: m.closedAt - finalHistory[i]!.closedAt }));
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
    const totals = churnLog.reduce((sum, c) => ({ left: sum.left + c.left, fresh: sum.fresh + c.fresh, rejoined: sum.rejoined + c.rejoined }), {
      left: 0,
      fresh: 0,
      rejoined: 0,
    });
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
      status,
      accuracy: lastEval?.testAccuracy ?? null,
      contributors: { min: Math.min(...contributors), max: Math.max(...contributors) },
      churned: totals,
      accepted,
      retried,
      clientErrors: clientErrors.length,
      serverErrorLines: server.errorLines.length,
      load: { before: loadBefore, after: loadAfter },
    };
    console.log(JSON.stringify(figures, null, 1));
    const thin = finalHistory.filter((m) => m.contributors < workers / 10).map((m) => `${m.version}: ${m.contributors}`);
    console.log(`rounds with fewer than ${workers / 10} contributors (version: contributors): ${thin.join(', ') || 'none'}`);
    for (const line of [...clientErrors.slice(0, 10), ...server.errorLines.slice(0, 10)]) console.log(`  ${line}`);

    const yes = (ok: boolean) => (ok ? 'yes' : '**no**');
    const passes = {
      lost: !lost,
      stalled: !stalled && longestGap < DEADLINE_MS,
      rss: first.ratio <= 1.2 && second.ratio <= 1.2,
      checkpoints: finalCheckpoints.bad.length === 0 && checkpointsBad.length === 0 && (restart?.checkpoints.bad.length ?? 1) === 0,
    };
    // The two modes keep a section each: a full-size run needs --reuse on a small machine, an honest one is smaller.
    writeSection(
      reuse ? 'soak' : 'soak-honest',
      `## Soak${reuse ? ', gradients resent' : ', every gradient computed'}: a long class with churn, an attacker and a restart (\`npm run bench -- soak\`)

${new Date().toISOString().slice(0, 10)}; \`npm run bench -- soak --workers ${workers} --rounds ${rounds} --churn ${churn}${reuse ? ' --reuse' : ''}\`. The server is a real process
(\`node --import tsx server/index.ts\`, as \`npm start\` runs it) on loopback; ${workers} simulated tabs (SimulatedWorker: the real protocol, ${
        reuse
          ? 'each computing its honest gradient once, at its first round, and resending it with every later version (--reuse)'
          : 'each computing its honest gradient every round'
      }, MLP, spectral ATOMO, batch 8) run in ${THREADS} worker threads of the bench process. Every round ${churn * 100}% of the
connected tabs leave for good; of those that left the round before, half come back with their key and half are replaced by new tabs (new identities;
unused identities expire after a minute). One tab is marked sign-flipped ×10 by the teacher's socket (the default norm-bound rule holds it). After
${restartVersion} rounds (the checkpoint's version) the server gets SIGTERM and is started again on the same port and data folder; the tabs reconnect and rejoin by themselves, and
the teacher marks the attacker again (attacks are not checkpointed). Load average ${loadBefore.map((l) => l.toFixed(1)).join(' / ')} (1/5/15 min) before,
${loadAfter.map((l) => l.toFixed(1)).join(' / ')} after: the machine was shared with other engineers' jobs, so times are inflated and noisy.

${markdownTable(
  ['check', 'result', 'passes'],
  [
    [
      `every version trained exactly once (0..${rounds - 1}): rounds recorded, versions missing, versions repeated`,
      `${finalHistory.length}; ${missing}; ${repeated}`,
      yes(passes.lost),
    ],
    [
      'restart: exit code, version restored vs last seen',
      restart === null ? 'no restart' : `${restart.exitCode}; checkpoint at ${restart.restoredVersion}, ${restartAt} seen before the stop`,
      yes(restart !== null && restart.exitCode === 0 && restart.restoredVersion >= restartAt),
    ],
    ['longest gap between rounds (restart excluded) vs the 20 s deadline', `${fmt(longestGap / 1000)} s`, yes(passes.stalled)],
    ['gap across the restart (stop, start, rejoin)', `${fmt(restartGap / 1000)} s`, '–'],
    [
      'server RSS after warm-up, min–max (max/min), before / after the restart',
      `${fmt(first.min)}–${fmt(first.max)} MB (${fmt(first.ratio)}) / ${fmt(second.min)}–${fmt(second.max)} MB (${fmt(second.ratio)})`,
      yes(passes.rss),
    ],
    [
      'checkpoint files read back and valid and finite (every 10 rounds while running / at the restart / at the end)',
      `${checkpointReads} / ${restart?.checkpoints.files ?? 0} / ${finalCheckpoints.files} files, ${checkpointsBad.length + (restart?.checkpoints.bad.length ?? 0) + finalCheckpoints.bad.length} bad`,
      yes(passes.checkpoints),
    ],
    ['run at the end', `${status?.status ?? '?'}${status?.fault ? ` (fault: ${status.fault})` : ''}`, yes(status?.status === 'finished')],
    ['rounds/s (wall, restart included)', fmt(finalHistory.length / seconds), '–'],
    ['contributors per round, min–max', `${Math.min(...contributors)}–${Math.max(...contributors)}`, '–'],
    ['tabs that left / came back with their key / new', `${totals.left} / ${totals.rejoined} / ${totals.fresh}`, '–'],
    [
      `test accuracy at the last evaluation (attacker held${reuse ? '; reused gradients do not train a model, so low' : ''})`,
      figures.accuracy === null ? '–' : `${fmt(100 * figures.accuracy)}%`,
      '–',
    ],
    [
      'gradients accepted; joins retried (cut off by the restart); refusals other than join/leave races; server error lines',
      `${accepted}; ${retried}; ${clientErrors.length}; ${server.errorLines.length}`,
      yes(clientErrors.length === 0 && server.errorLines.length === 0),
    ],
  ],
)}

Warm-up is each process's first ${warm} rounds (RSS samples are taken as each round closes). What it leaves out: a single run; the tabs share
the machine with the server; no network between them.`,
    );
  } finally {
    admin?.close();
    for (const t of threads) await t.terminate();
    await server.stop();
    removeDataDir(dataDir);
  }
}
