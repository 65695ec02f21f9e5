/**
 * The cluster survives the loss of any one process (docs/scaling.md, "Failover"):
 * `npm start -- --processes 3` for real (its own Redis), 100 simulated workers
 * in two worker threads spread over the three processes by the shared port;
 * SIGKILL a process that does not lead (its workers reconnect to the others
 * and the run goes on), then SIGKILL the leader (another takes its lease
 * within 5 s and resumes from the last checkpoint). Throughout, no version is
 * lost or repeated: the run's history is 0, 1, 2, … with each version once,
 * and the version never goes back.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { connectSocket } from '../../client/net/socket';
import type { RoundMetrics, RunSummary } from '../../core/protocol';
import { startWorkerThreads, type WorkerThreads } from '../swarm/threads';
import { getJson, launchAggregator, stopAggregator } from './launch';

/** This project's test port block (3650-3699): the cluster's port and its Redis. */
const PORT = 3661;
const REDIS_PORT = 3662;
const NAMESPACE = 'kill-test';
const TOKEN = 'kill-test-token';
const WORKERS = 100;
const url = `http://127.0.0.1:${PORT}`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const get = <T>(path: string) => getJson<T>(`${url}${path}`, 100);

describe('three processes, SIGKILL one, then the leader', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'atomo-kill-'));
  let primary: ChildProcess | null = null;
  let threads: WorkerThreads | null = null;
  const redis = new Redis(`redis://127.0.0.1:${REDIS_PORT}`, { lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  let maxSeen = -1;

  afterAll(async () => {
    await threads?.stop().catch(() => undefined);
    redis.disconnect();
    if (primary !== null) await stopAggregator(primary);
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** The run's version now (never lower than before: a lower one would be a lost version). */
  const version = async (runId: string) => {
    const runs = await get<RunSummary[]>('/api/runs');
    const v = runs.find((r) => r.runId === runId)?.version ?? -1;
    expect(v).toBeGreaterThanOrEqual(maxSeen);
    maxSeen = Math.max(maxSeen, v);
    return v;
  };
  const waitForVersion = async (runId: string, target: number, what: string) => {
    const deadline = Date.now() + 90_000;
    while ((await version(runId)) < target) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for version ${target} (${what})`);
      await sleep(200);
    }
  };
  const leaderPid = async () => {
    const value = await redis.get(`${NAMESPACE}:leader`);
    return value === null ? null : { processId: value.split(' ')[0]!, pid: Number(value.split('.')[0]) };
  };
  const processPids = async () =>
    (await redis.keys(`${NAMESPACE}:proc:*`)).map((key) => Number(key.split(':proc:')[1]!.split('.')[0]));

  it('keeps training with no lost or repeated version, and a new leader within 5 s', async () => {
    primary = launchAggregator({
      processes: 3,
      port: PORT,
      redisPort: REDIS_PORT,
      dataDir,
      adminToken: TOKEN,
      namespace: NAMESPACE,
      maxWorkersPerAddress: 10 * WORKERS,
    });
    let output = '';
    primary.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    primary.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const started = Date.now();
    while (!output.includes('listening on')) {
      if (primary.exitCode !== null || Date.now() - started > 90_000)
        throw new Error(`the cluster did not start:\n${output}`);
      await sleep(100);
    }
    await redis.connect();
    try {
      await killProcessesAndRecover();
    } catch (error) {
      throw new Error(
        `${(error as Error).message}\n--- the cluster's output (last 4000 characters):\n${output.slice(-4000)}`,
        { cause: error },
      );
    }
  });

  async function killProcessesAndRecover(): Promise<void> {
    const admin = await connectSocket(url, { adminToken: TOKEN });
    const created = await admin.timeout(20_000).emitWithAck('run:create', {
      name: 'kill test',
      scheme: 'atomo-svd',
      batchSize: 8,
      maxRounds: 1000,
      evalEvery: 1000,
      roundDeadlineMs: 10_000,
    });
    if (!created.ok) throw new Error(created.error.message);
    const runId = created.run.runId;
    threads = await startWorkerThreads(
      [0, 1].map((i) => ({ url, runId, count: WORKERS / 2, backend: 'cpu' as const, name: `kill-${i}` })),
      new URL('../bench/loadThread.ts', import.meta.url),
    );
    const startedRun = await admin.timeout(20_000).emitWithAck('run:start', { runId });
    expect(startedRun.ok).toBe(true);
    admin.disconnect();
    // Every process holds some of the workers.
    expect(new Set(await processPids()).size).toBe(3);
    await waitForVersion(runId, 3, 'before any kill');

    // 1. A process that does not lead.
    const leader = (await leaderPid())!;
    const follower = (await processPids()).find((pid) => pid !== leader.pid)!;
    process.kill(follower, 'SIGKILL');
    const atFirstKill = await version(runId);
    await waitForVersion(runId, atFirstKill + 3, 'after killing a follower');

    // 2. The leader (read again: the lease is what counts).
    const atSecondKill = await version(runId);
    const current = (await leaderPid())!;
    process.kill(current.pid, 'SIGKILL');
    const killedAt = Date.now();
    let takeoverMs = Infinity;
    while (Date.now() - killedAt < 10_000) {
      const next = await leaderPid();
      if (next !== null && next.processId !== current.processId) {
        takeoverMs = Date.now() - killedAt;
        break;
      }
      await sleep(50);
    }
    expect(takeoverMs).toBeLessThan(5_000);
    await waitForVersion(runId, atSecondKill + 3, 'after killing the leader');

    // Every worker is back: a round with all of them in.
    const deadline = Date.now() + 60_000;
    let full: RoundMetrics | undefined;
    while (full === undefined) {
      const { history } = await get<{ history: RoundMetrics[] }>(`/api/runs/${runId}/metrics.json`);
      full = history.slice(atSecondKill).find((m) => m.contributors === WORKERS);
      if (full === undefined && Date.now() > deadline)
        throw new Error(`no full round after the kills: ${history.slice(-5).map((m) => m.contributors)}`);
      if (full === undefined) await sleep(500);
    }

    // No lost or repeated version: the history is 0, 1, 2, … and the summary's version is its length.
    const { history } = await get<{ history: RoundMetrics[] }>(`/api/runs/${runId}/metrics.json`);
    expect(history.map((m) => m.version)).toEqual(history.map((_, i) => i));
    expect(history.length).toBeGreaterThanOrEqual(atSecondKill + 3);
    expect(await version(runId)).toBeGreaterThanOrEqual(history.length);
    console.log(
      `kill test: ${history.length} rounds; follower killed at version ${atFirstKill}, ` +
        `leader at ${atSecondKill}; new leader after ${takeoverMs} ms; ` +
        `full round again at version ${full.version}`,
    );
  }
});
