/** Teacher control: refused without the admin token, working with it. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_EVENTS, asRunId, asWorkerId, type Ack, type RunSummary } from '../../core/protocol';
import {
  TEST_ADMIN_TOKEN,
  connectClient,
  removeDataDir,
  startServer,
  waitFor,
  type TestServer,
} from '../testing/harness';
import { joinRaw } from '../testing/rawWorker';
import type { AppSocket as ClientSocket } from '../../client/net/socket';

type AnyEmit = (event: string, payload: unknown) => Promise<Ack<{ run?: RunSummary }>>;

function emitter(socket: ClientSocket): AnyEmit {
  return (event, payload) =>
    (socket.timeout(10_000) as unknown as { emitWithAck: AnyEmit }).emitWithAck(event, payload);
}

describe('teacher control', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ defaultRun: { scheme: 'none', batchSize: 8, maxRounds: 1000, evalEvery: 1000 } });
  });
  afterAll(async () => {
    await server.close();
    removeDataDir(server.dataDir);
  });

  it('refuses every teacher action without the token, and changes nothing', async () => {
    const student = await connectClient(server.url);
    const send = emitter(student);
    const runId = server.app.runs.list()[0]!.id;
    const payloads: Record<(typeof ADMIN_EVENTS)[number], unknown> = {
      'run:create': { name: 'mine' },
      'run:configure': { runId, config: { learningRate: 1 } },
      'run:start': { runId },
      'run:pause': { runId },
      'run:resume': { runId },
      'run:reset': { runId },
      'run:delete': { runId },
      'worker:move': { workerId: 1, runId },
      'worker:remove': { workerId: 1 },
      'worker:attack': { workerId: 1, attack: { kind: 'sign-flip', factor: 10 } },
      'worker:simulate': { runId },
    };
    for (const event of ADMIN_EVENTS) {
      const ack = await send(event, payloads[event]);
      expect(ack).toMatchObject({ ok: false, error: { code: 'forbidden', event } });
    }
    expect(server.app.runs.list().map((r) => [r.id, r.status, r.config.learningRate])).toEqual([
      [runId, 'running', 0.1],
    ]);
    expect(server.app.runs.list()[0]!.summary().workers).toEqual([]);
    student.disconnect();
  });

  it('refuses a connection that presents a wrong token', async () => {
    await expect(connectClient(server.url, 'wrong')).rejects.toThrow(/forbidden/);
  });

  it(
    'creates, configures, starts, pauses, resumes, resets and deletes runs, ' + 'and moves and removes workers',
    async () => {
      const teacher = await connectClient(server.url, TEST_ADMIN_TOKEN);
      const send = emitter(teacher);

      await teacher.timeout(10_000).emitWithAck('dashboard:subscribe', {});
      const announced = new Promise<RunSummary>((resolve) =>
        teacher.on('run:state', (run) => run.config.name === 'race' && resolve(run)),
      );
      const created = await send('run:create', { name: 'race', scheme: 'terngrad', batchSize: 8, evalEvery: 1000 });
      expect(created.ok).toBe(true);
      // Dashboards see a created run at once, before anything else happens to it.
      expect(await announced).toMatchObject({ status: 'created', config: { name: 'race' } });
      const run = created.ok ? created.run! : null!;
      expect(run).toMatchObject({ status: 'created', config: { name: 'race', scheme: 'terngrad' } });
      const runId = run.runId;

      expect(await send('run:configure', { runId, config: { learningRate: 0.05, budget: -1 } })).toMatchObject({
        ok: false,
        error: { code: 'invalid-config' },
      });
      expect(
        await send('run:configure', { runId, config: { learningRate: 0.05, scheme: 'atomo-entry' } }),
      ).toMatchObject({
        ok: true,
        run: { config: { learningRate: 0.05, scheme: 'atomo-entry', budget: 1024 } },
      });
      expect(await send('run:configure', { runId, config: { scheme: 'terngrad' } })).toMatchObject({ ok: true });

      // A worker in the default run moves into the new run and trains there once it starts.
      const worker = await joinRaw(server.url);
      expect((await worker.nextRound()).runId).toBe(server.app.runs.list()[0]!.id);
      const assigned = new Promise<unknown>((resolve) => worker.socket.once('worker:assigned', resolve));
      expect(await send('worker:move', { workerId: worker.accepted.workerId, runId })).toMatchObject({ ok: true });
      expect(await assigned).toMatchObject({ runId, workerId: worker.accepted.workerId });
      expect(await send('run:start', { runId })).toMatchObject({ ok: true, run: { status: 'running' } });
      expect(await send('run:start', { runId })).toMatchObject({ ok: false, error: { code: 'invalid-state' } });
      const round = await worker.nextRound();
      expect(round).toMatchObject({ runId, version: 0 });

      expect(await send('run:pause', { runId })).toMatchObject({ ok: true, run: { status: 'paused', round: null } });
      expect(await send('run:resume', { runId })).toMatchObject({ ok: true, run: { status: 'running' } });
      expect(await worker.nextRound()).toMatchObject({ runId, version: 0 });
      expect(await send('run:reset', { runId })).toMatchObject({ ok: true, run: { status: 'created', version: 0 } });

      const removed = new Promise<unknown>((resolve) => worker.socket.once('worker:removed', resolve));
      expect(await send('worker:remove', { workerId: worker.accepted.workerId })).toMatchObject({ ok: true });
      expect(await removed).toMatchObject({ workerId: worker.accepted.workerId });
      expect(server.app.workers.get(asWorkerId(worker.accepted.workerId))).toBeUndefined();
      expect(await send('worker:remove', { workerId: worker.accepted.workerId })).toMatchObject({
        ok: false,
        error: { code: 'unknown-worker' },
      });

      expect(await send('run:delete', { runId })).toMatchObject({ ok: true });
      expect(server.app.runs.list().map((r) => r.id)).not.toContain(runId);
      expect(await send('run:start', { runId: asRunId(runId) })).toMatchObject({
        ok: false,
        error: { code: 'unknown-run' },
      });
      worker.close();
      teacher.disconnect();
      await waitFor(() => true);
      expect(server.errors).toEqual([]);
    },
  );
});
