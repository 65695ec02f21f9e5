/**
 * Workers the server simulates (worker:simulate, teacher only): each trains
 * honestly on its own shard with the project's worker round, the attack
 * toggle applies to it, the teacher can remove it, it follows its run when
 * the run is deleted, and it is never checkpointed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aggregate } from '../../core/aggregation';
import { reconstruct } from '../../core/atomo';
import { decodeLayer } from '../../core/codec';
import { createCpuBackend } from '../../core/model/cpu/backend';
import { sgdMomentumStep } from '../../core/model/optimiser';
import { asWorkerId, type Ack, type RunId, type WorkerId } from '../../core/protocol';
import { shardIndices } from '../../core/training/shard';
import { createWorkerRound } from '../../core/training/workerRound';
import { startLocalServer } from '../local';
import type { Run } from './run';
import { MAX_SIMULATED_PER_RUN } from './simulated';
import {
  TEST_ADMIN_TOKEN,
  connectClient,
  loadTestData,
  removeDataDir,
  startServer,
  waitFor,
  type TestServer,
} from '../testing/harness';
import type { AppSocket as ClientSocket } from '../../client/net/socket';

const CONFIG = {
  scheme: 'none',
  batchSize: 8,
  maxRounds: 1000,
  evalEvery: 1000,
  learningRate: 0.1,
  momentum: 0,
  roundDeadlineMs: 60_000,
} as const;

/**
 * The honest update of version 0 → 1 of `run` by workers in `slots` (ascending ids), each estimate multiplied by
 * `factors[i]`.
 */
async function expectedParams(
  run: Run,
  initial: Float32Array,
  slots: readonly number[],
  factors: readonly number[],
): Promise<Float32Array> {
  const { train } = await loadTestData();
  const { config, layout } = run;
  const estimates: Float32Array[] = [];
  for (const [i, slot] of slots.entries()) {
    const round = createWorkerRound({
      backend: createCpuBackend(layout),
      layout,
      compression: config,
      batchSize: config.batchSize,
      seed: config.seed,
      worker: slot,
      train,
      shard: shardIndices(train.labels, config, slot % config.shards),
    });
    const { layers } = await round(initial, 0);
    const flat = new Float32Array(layout.parameterCount);
    layers.forEach((bytes, layer) => flat.set(reconstruct(decodeLayer(bytes).sample), layout.tensors[layer]!.offset));
    for (let j = 0; j < flat.length; j++) flat[j] = flat[j]! * factors[i]!;
    estimates.push(flat);
  }
  const params = initial.slice();
  sgdMomentumStep(
    params,
    new Float32Array(params.length),
    aggregate(config.aggregation, estimates, layout.parameterCount).value,
    config.learningRate,
    config.momentum,
  );
  return params;
}

describe('simulated workers', () => {
  let server: TestServer;
  let teacher: ClientSocket;
  let closed = false;
  const send = <T extends object = object>(event: string, payload: unknown) =>
    (teacher.timeout(10_000) as unknown as { emitWithAck: (e: string, p: unknown) => Promise<Ack<T>> }).emitWithAck(
      event,
      payload,
    );
  const simulate = async (runId: RunId): Promise<WorkerId> => {
    const answer = await send<{ workerId: WorkerId }>('worker:simulate', { runId });
    if (!answer.ok) throw new Error(`worker:simulate refused: ${answer.error.message}`);
    return answer.workerId;
  };

  beforeAll(async () => {
    server = await startServer({ defaultRun: false });
    teacher = await connectClient(server.url, TEST_ADMIN_TOKEN);
  });
  afterAll(async () => {
    teacher.disconnect();
    if (!closed) await server.close();
    removeDataDir(server.dataDir);
  });

  it('each trains honestly on its own shard: the first update is exactly the mean of their gradients', async () => {
    const run = server.app.runs.create({ ...CONFIG, aggregation: { kind: 'mean' } });
    const initial = run.params.slice();
    const ids = [await simulate(run.id), await simulate(run.id), await simulate(run.id)];
    const workers = run.summary().workers;
    expect(workers.map((w) => [w.workerId, w.slot, w.simulated, w.connected, w.backend?.kind])).toEqual(
      ids.map((id, slot) => [id, slot, true, true, 'cpu']),
    );
    run.start();
    await waitFor(() => run.version >= 1, 30_000, 'round 0');
    run.pause();
    expect(run.history[0]).toMatchObject({ participants: 3, contributors: 3 });
    expect(
      Buffer.from(run.params.buffer).equals(
        Buffer.from((await expectedParams(run, initial, [0, 1, 2], [1, 1, 1])).buffer),
      ),
    ).toBe(true);
  });

  it('are refused on a run of another dataset than MNIST, the one the server trains on', async () => {
    const run = server.app.runs.create({ ...CONFIG, dataset: 'fashion' });
    expect(await send('worker:simulate', { runId: run.id })).toMatchObject({
      ok: false,
      error: { code: 'invalid-state', message: `simulated workers train on MNIST only; run ${run.id} uses fashion` },
    });
  });

  it('the teacher’s attack toggle applies to a simulated worker', async () => {
    const run = server.app.runs.create({ ...CONFIG, aggregation: { kind: 'mean' } });
    const initial = run.params.slice();
    const honest = await simulate(run.id);
    const attacker = await simulate(run.id);
    expect(
      await send('worker:attack', { workerId: attacker, attack: { kind: 'sign-flip', factor: 10 } }),
    ).toMatchObject({ ok: true });
    expect(run.summary().workers.map((w) => [w.workerId, w.attack])).toEqual([
      [honest, null],
      [attacker, { kind: 'sign-flip', factor: 10 }],
    ]);
    run.start();
    await waitFor(() => run.version >= 1, 30_000, 'round 0');
    run.pause();
    expect(
      Buffer.from(run.params.buffer).equals(Buffer.from((await expectedParams(run, initial, [0, 1], [1, -10])).buffer)),
    ).toBe(true);
  });

  it(
    'is removed by the teacher like any worker, follows its run when that is deleted, ' +
      'and refuses beyond the per-run bound',
    async () => {
      const first = server.app.runs.create(CONFIG, 'running');
      const second = server.app.runs.create(CONFIG, 'running');
      const kept = await simulate(first.id);
      const removed = await simulate(first.id);
      await waitFor(() => first.version >= 2, 30_000, 'two rounds');
      expect(await send('worker:remove', { workerId: removed })).toMatchObject({ ok: true });
      expect(server.app.workers.get(removed)).toBeUndefined();
      const at = first.version;
      await waitFor(() => first.version >= at + 2, 30_000, 'two rounds after the removal');
      expect(first.history.slice(at + 1).map((m) => m.contributors)).toEqual(first.history.slice(at + 1).map(() => 1));
      expect(first.summary().workers.map((w) => w.workerId)).toEqual([kept]);

      // Run deleted: the simulated worker moves on to the oldest run left and trains there.
      const runsBefore = server.app.runs.list().map((r) => r.id);
      expect(await send('run:delete', { runId: first.id })).toMatchObject({ ok: true });
      const fallback = server.app.runs.get(server.app.runs.list()[0]!.id);
      expect(runsBefore).toContain(fallback.id);
      expect(fallback.member(kept)?.connected).toBe(true);
      if (fallback.status === 'paused') fallback.resume();
      const from = fallback.version;
      await waitFor(
        () => fallback.history.some((m) => m.version >= from && m.workers.some((w) => w.workerId === kept)),
        30_000,
        'a round in the fallback run',
      );

      for (let i = second.summary().workers.filter((w) => w.simulated).length; i < MAX_SIMULATED_PER_RUN; i++)
        await simulate(second.id);
      expect(await send('worker:simulate', { runId: second.id })).toMatchObject({
        ok: false,
        error: {
          code: 'invalid-state',
          message: `run ${second.id} already has ${MAX_SIMULATED_PER_RUN} simulated workers`,
        },
      });
      expect(await send('worker:simulate', { runId: 'nope' })).toMatchObject({
        ok: false,
        error: { code: 'unknown-run' },
      });
      expect(server.errors).toEqual([]);
    },
  );

  it('is never checkpointed: workers.json holds no simulated identity', async () => {
    const run = server.app.runs.create(CONFIG);
    const id = await simulate(run.id);
    closed = true;
    await server.close();
    const stored = JSON.parse(readFileSync(join(server.dataDir, 'workers.json'), 'utf8')) as {
      workers: { workerId: number }[];
    };
    expect(stored.workers.map((w) => w.workerId)).not.toContain(id);
    expect(server.app.workers.get(asWorkerId(id))?.simulated).toBe(true);
  });
});

describe('simulated workers without training data', () => {
  it('are refused with the reason', async () => {
    const { test } = await loadTestData();
    const server = await startLocalServer(test, { adminToken: TEST_ADMIN_TOKEN });
    try {
      const teacher = await connectClient(server.url, TEST_ADMIN_TOKEN);
      const answer = await teacher
        .timeout(10_000)
        .emitWithAck('worker:simulate', { runId: server.app.runs.list()[0]!.id });
      expect(answer).toMatchObject({
        ok: false,
        error: { code: 'invalid-state', message: 'this server has no training data, so it cannot simulate workers' },
      });
      teacher.disconnect();
    } finally {
      await server.close();
      removeDataDir(server.dataDir);
    }
  });
});
