/**
 * What the teacher's workers table learns about a worker: the name and
 * backend it joined with (sanitised and capped), and the round trip and
 * last-seen time the server measures itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION, type WorkerSummary } from '../../core/protocol';
import { DEFAULT_RUN_ID } from '../app';
import { connectClient, loadTestData, removeDataDir, startServer, waitFor, type TestServer } from '../testing/harness';
import { HeadlessTab } from '../../client/net/headlessTab';

describe('worker profile in the run summary', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({
      defaultRun: { scheme: 'terngrad', batchSize: 8, maxRounds: 1000, evalEvery: 1000, roundDeadlineMs: 2000 },
    });
  });
  afterAll(async () => {
    await server.close();
    removeDataDir(server.dataDir);
  });

  const summaryOf = (workerId: number): WorkerSummary | undefined =>
    server.app.runs
      .get(DEFAULT_RUN_ID)
      .summary()
      .workers.find((w) => w.workerId === workerId);

  it('shows the sanitised name and the backend the worker joined with', async () => {
    const socket = await connectClient(server.url);
    const answer = await socket.timeout(10_000).emitWithAck('worker:join', {
      protocol: PROTOCOL_VERSION,
      name: '  Chrome\n\u202eevil\u200b   tab  with a name far longer than forty characters ',
      backend: { kind: 'webgpu', detail: 'SwiftShader\u0000 Device' },
    });
    socket.disconnect();
    expect(answer.ok).toBe(true);
    const workerId = answer.ok ? answer.workerId : -1;
    const worker = summaryOf(workerId);
    expect(worker?.name).toBe('Chrome evil tab with a name far longer t');
    expect(worker?.name.length).toBeLessThanOrEqual(40);
    expect(worker?.backend).toEqual({ kind: 'webgpu', detail: 'SwiftShader Device' });
    expect(worker?.lastSeenAt).toEqual(expect.any(Number));
  });

  it('names a worker that sent no usable name by its id, and refuses an unknown backend', async () => {
    const socket = await connectClient(server.url);
    const blank = await socket
      .timeout(10_000)
      .emitWithAck('worker:join', { protocol: PROTOCOL_VERSION, name: '\n\t ' });
    expect(blank.ok).toBe(true);
    const blankId = blank.ok ? blank.workerId : -1;
    expect(summaryOf(blankId)).toMatchObject({ name: `worker ${blankId}`, backend: null });
    const bad = await socket
      .timeout(10_000)
      .emitWithAck('worker:join', { protocol: PROTOCOL_VERSION, backend: { kind: 'tpu' } as never });
    expect(bad).toMatchObject({ ok: false, error: { code: 'bad-message' } });
    const long = await socket
      .timeout(10_000)
      .emitWithAck('worker:join', { protocol: PROTOCOL_VERSION, name: 'x'.repeat(300) });
    socket.disconnect();
    expect(long).toMatchObject({ ok: false, error: { code: 'bad-message' } });
  });

  it(
    'passes a calibrated backend through when the worker rejoins with it, ' + 'and refuses times that are not times',
    async () => {
      const socket = await connectClient(server.url);
      const first = await socket
        .timeout(10_000)
        .emitWithAck('worker:join', { protocol: PROTOCOL_VERSION, backend: { kind: 'webgpu', detail: 'SwiftShader' } });
      expect(first.ok).toBe(true);
      if (!first.ok) return;
      // A tab joins before it has timed its backends, then rejoins with the times and its choice.
      const calibration = { webgpuMs: 41.5, cpuMs: 9.25 };
      const again = await socket.timeout(10_000).emitWithAck('worker:join', {
        protocol: PROTOCOL_VERSION,
        workerKey: first.workerKey,
        backend: { kind: 'cpu', detail: 'The CPU was faster than WebGPU (SwiftShader) on this device.', calibration },
      });
      expect(again).toMatchObject({ ok: true, workerId: first.workerId });
      expect(summaryOf(first.workerId)?.backend).toEqual({
        kind: 'cpu',
        detail: 'The CPU was faster than WebGPU (SwiftShader) on this device.',
        calibration,
      });
      for (const bad of [
        { webgpuMs: -1, cpuMs: 2 },
        { webgpuMs: 1, cpuMs: Number.NaN },
        { webgpuMs: 1 },
        { webgpuMs: '1', cpuMs: 2 },
        [1, 2],
        4e6,
      ]) {
        const answer = await socket.timeout(10_000).emitWithAck('worker:join', {
          protocol: PROTOCOL_VERSION,
          workerKey: first.workerKey,
          backend: { kind: 'cpu', calibration: bad } as never,
        });
        expect(answer, JSON.stringify(bad)).toMatchObject({
          ok: false,
          error: { code: 'bad-message', message: expect.stringContaining('calibration') },
        });
      }
      socket.disconnect();
      // Nothing of the refused joins was applied.
      expect(summaryOf(first.workerId)?.backend).toEqual(expect.objectContaining({ calibration }));
    },
  );

  it('measures the round trip of an accepted gradient on the server clock', async () => {
    const { train } = await loadTestData();
    const worker = new HeadlessTab({
      url: server.url,
      train,
      name: 'sim',
      backend: { kind: 'cpu', detail: 'headless' },
    });
    const joinedAt = Date.now();
    const { workerId } = await worker.start();
    expect(summaryOf(workerId)?.latencyMs).toBeNull();
    await waitFor(() => worker.accepted.length >= 1, 30_000, 'an accepted gradient');
    const acceptedAt = Date.now();
    worker.stop();
    const summary = summaryOf(workerId)!;
    expect(summary).toMatchObject({ name: 'sim', backend: { kind: 'cpu', detail: 'headless' } });
    // A round trip of this worker, on the same clock: inside the time between its join and its acceptance.
    expect(summary.latencyMs).toBeGreaterThanOrEqual(0);
    expect(summary.latencyMs!).toBeLessThanOrEqual(acceptedAt - joinedAt);
    expect(summary.lastSeenAt).toBeGreaterThanOrEqual(joinedAt);
    expect(summary.lastSeenAt).toBeLessThanOrEqual(acceptedAt);
  });
});
