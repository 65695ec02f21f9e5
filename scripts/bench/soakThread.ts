/**
 * One thread of the soak (`npm run bench -- soak`): many headless tabs (HeadlessTab)
 * (the real protocol, honest gradients) in one run, and their churn. On each
 * `churn` message it disconnects a fraction of its connected tabs for good;
 * of those that left at the previous churn, half come back with their key
 * (the same worker) and half are replaced by new tabs without one (a new
 * identity each, so the server's identity bounds and expiry are exercised).
 * Tab 0 of thread 0 is the attacker and never leaves.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { loadMnist } from '../../core/data';
import type { RunId, WorkerKey } from '../../core/protocol';
import { seededRng } from '../../core/testing/seeded';
import { createFileReader } from '../../server/data/fileReader';
import { HeadlessTab } from '../../client/net/headlessTab';

/** What a soak thread is started with. */
export interface SoakThreadData {
  readonly url: string;
  readonly runId: RunId;
  readonly count: number;
  readonly thread: number;
  readonly seed: number;
  /** Each tab resends its first gradient (HeadlessTab's reuseGradient). */
  readonly reuse: boolean;
  /**
   * Each tab waits this long × U(0.5, 1.5) before sending each gradient, as a device computing it would (0: at once).
   */
  readonly paceMs: number;
}

/** Main → thread. */
export type ToSoakThread = { readonly type: 'churn'; readonly fraction: number } | { readonly type: 'stop' };

/** Thread → main. */
export type FromSoakThread =
  | { readonly type: 'joined'; readonly workerIds: readonly number[] }
  | {
      readonly type: 'churned';
      readonly left: number;
      readonly rejoined: number;
      readonly fresh: number;
      readonly connected: number;
      /** Tabs whose join (or rejoin) is still in flight, and the slowest join of this churn (ms). */
      readonly joining: number;
      readonly slowestJoinMs: number;
      /**
       * Of that join, the part until its WebSocket opened, and until its socket.io connection was accepted (the rest
       * waited for the join's answer).
       */
      readonly slowestOpenMs: number;
      readonly slowestConnectMs: number;
      /** The longest this thread's event loop was blocked since the last report (ms): the tabs' side of a slow join. */
      readonly loopDelayMs: number;
      /** Failed connection attempts of joining tabs since the last report, and the last one's reason. */
      readonly connectErrors: number;
      readonly lastConnectError: string | null;
    }
  | {
      readonly type: 'stopped';
      readonly accepted: number;
      readonly retried: number;
      /**
       * Gradients refused `not-joined`: queued by a tab's socket while the server was down, sent on reconnecting before
       * its rejoin.
       */
      readonly sentBeforeRejoin: number;
      readonly errors: readonly string[];
    }
  | { readonly type: 'failed'; readonly message: string };

/** Refusals that are races of joining or leaving mid-round, not faults (docs/protocol.md, "round:open"). */
const RACES = new Set(['stale-version', 'round-closed', 'not-participant', 'future-version']);

const data = workerData as SoakThreadData;
const port = parentPort;
if (port === null) throw new Error('soakThread.ts runs only as a worker thread');
const post = (message: FromSoakThread): void => port.postMessage(message);

try {
  const { train } = await loadMnist(createFileReader());
  const rng = seededRng(data.seed + data.thread);
  const paceRng = seededRng(1000 + data.seed + data.thread);
  const pace = async (): Promise<void> => {
    if (data.paceMs > 0) await new Promise((resolve) => setTimeout(resolve, data.paceMs * (0.5 + paceRng())));
  };
  let made = 0;
  const spawn = (workerKey?: WorkerKey) =>
    new HeadlessTab({
      url: data.url,
      train,
      runId: data.runId,
      name: `soak-${data.thread}-${made++}`,
      reuseGradient: data.reuse,
      beforeSubmit: pace,
      ...(workerKey === undefined ? {} : { workerKey }),
    });
  let active = Array.from({ length: data.count }, () => spawn());
  const attacker = data.thread === 0 ? active[0] : undefined;
  const joined = await Promise.all(active.map((w) => w.start()));
  post({ type: 'joined', workerIds: joined.map((j) => j.workerId) });
  let departed: HeadlessTab[] = [];
  let retiredAccepted = 0;
  const errors: string[] = [];
  let sentBeforeRejoin = 0;
  const collect = (w: HeadlessTab) => {
    for (const e of w.errors) {
      if (e.code === 'not-joined') sentBeforeRejoin++;
      else if (!RACES.has(e.code)) errors.push(`${e.code}: ${e.message}`);
    }
    w.errors.length = 0;
  };

  let stopping = false;
  /**
   * Joins; a join cut off by the server's restart (its socket closed mid-ack) is tried again, as a tab reloading would.
   */
  let joining = 0;
  let connectErrors = 0;
  let lastConnectError: string | null = null;
  const loopDelay = monitorEventLoopDelay({ resolution: 20 });
  loopDelay.enable();
  const startRetrying = async (w: HeadlessTab): Promise<{ joinMs: number; openMs: number; connectMs: number }> => {
    const begun = performance.now();
    let openMs = Number.NaN;
    let connectMs = Number.NaN;
    w.socket.io.once('open', () => (openMs = performance.now() - begun));
    w.socket.once('connect', () => (connectMs = performance.now() - begun));
    w.socket.on('connect_error', (error) => {
      connectErrors++;
      lastConnectError = error.message;
    });
    joining++;
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          await w.start();
          return { joinMs: performance.now() - begun, openMs, connectMs };
        } catch (error) {
          if (stopping || attempt >= 5) throw error;
          retried++;
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
      }
    } finally {
      joining--;
    }
  };
  let retried = 0;
  port.on('message', (message: ToSoakThread) => {
    if (stopping) return;
    if (message.type === 'stop') {
      stopping = true;
      for (const w of active) w.stop();
      for (const w of [...active, ...departed]) collect(w);
      post({
        type: 'stopped',
        retried,
        sentBeforeRejoin,
        accepted: retiredAccepted + [...active, ...departed].reduce((sum, w) => sum + w.accepted.length, 0),
        errors,
      });
      port.close();
      return;
    }
    void (async () => {
      // Those who left last time: half return as themselves, half are replaced by newcomers.
      const back: HeadlessTab[] = [];
      let fresh = 0;
      departed.forEach((w, i) => {
        collect(w);
        retiredAccepted += w.accepted.length;
        if (i % 2 === 0 && w.workerKey !== undefined) back.push(spawn(w.workerKey));
        else {
          back.push(spawn());
          fresh++;
        }
      });
      const leaving = active.filter((w) => w !== attacker && rng() < message.fraction);
      for (const w of leaving) w.stop();
      departed = leaving;
      active = active.filter((w) => !leaving.includes(w));
      const started = await Promise.allSettled(back.map((w) => startRetrying(w)));
      let slowest = { joinMs: 0, openMs: 0, connectMs: 0 };
      started.forEach((result, i) => {
        // A tab that finished joining after the soak stopped leaves at once.
        if (stopping) back[i]!.stop();
        else if (result.status === 'fulfilled') {
          active.push(back[i]!);
          if (result.value.joinMs > slowest.joinMs) slowest = result.value;
        } else errors.push(`rejoin failed: ${String(result.reason)}`);
      });
      const loopDelayMs = loopDelay.max / 1e6;
      loopDelay.reset();
      post({
        type: 'churned',
        left: leaving.length,
        rejoined: back.length - fresh,
        fresh,
        connected: active.length,
        joining,
        slowestJoinMs: slowest.joinMs,
        slowestOpenMs: slowest.openMs,
        slowestConnectMs: slowest.connectMs,
        loopDelayMs,
        connectErrors,
        lastConnectError,
      });
      connectErrors = 0;
      lastConnectError = null;
    })().catch((error: unknown) => errors.push(`churn failed: ${String(error)}`));
  });
} catch (error) {
  post({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  port.close();
}
