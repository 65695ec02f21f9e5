/**
 * Faults: every bad message is refused with its reason, and
 * the run's model ends byte-identical to a run that never saw it; a worker
 * that leaves mid-round or misses the deadline never stalls a round.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeLayer, maxLayerBytes } from '../../core/codec';
import type { Ack, GradientSubmission, ProtocolErrorCode, RoundOpen } from '../../core/protocol';
import { connectClient, loadTestData, removeDataDir, startServer, waitFor, type TestServer } from '../testing/harness';
import { HeadlessTab } from '../../client/net/headlessTab';

const ROUNDS = 3;
const FAULT_VERSION = 1;
const CONFIG = { scheme: 'none', batchSize: 8, maxRounds: ROUNDS, evalEvery: ROUNDS, roundDeadlineMs: 60_000 } as const;

type Fault = (
  worker: HeadlessTab,
  round: RoundOpen,
  honest: GradientSubmission,
  others: { peerId: number; server: TestServer },
) => Promise<void>;

/**
 * Trains two workers for ROUNDS rounds; worker A runs `fault` before its honest submission of FAULT_VERSION. Returns
 * the final weights.
 */
async function trainWith(fault?: Fault): Promise<{ params: Buffer; server: TestServer }> {
  const { train } = await loadTestData();
  const server = await startServer({ defaultRun: false });
  // Created, not started: both workers are in round 0, so every round has the same participants.
  const run = server.app.runs.create(CONFIG);
  let peerId = -1;
  const a = new HeadlessTab({
    url: server.url,
    train,
    runId: run.id,
    beforeSubmit: async (worker, round, honest) => {
      if (fault && round.version === FAULT_VERSION) await fault(worker, round, honest, { peerId, server });
    },
  });
  const b = new HeadlessTab({ url: server.url, train, runId: run.id });
  await a.start();
  peerId = (await b.start()).workerId;
  run.start();
  await waitFor(() => run.status === 'finished', 60_000, 'the run to finish');
  a.stop();
  b.stop();
  const params = Buffer.from(run.params.slice().buffer);
  expect(server.errors).toEqual([]);
  expect(run.history.map((m) => m.contributors)).toEqual(Array(ROUNDS).fill(2));
  return { params, server };
}

async function expectRefusal(
  worker: HeadlessTab,
  submission: unknown,
  code: ProtocolErrorCode,
  detail?: string,
): Promise<void> {
  const before = worker.errors.length;
  const ack = (await worker.socket
    .timeout(10_000)
    .emitWithAck('gradient:submit', submission as GradientSubmission)) as Ack;
  expect(ack.ok).toBe(false);
  if (ack.ok) return;
  expect(ack.error.code).toBe(code);
  expect(ack.error.event).toBe('gradient:submit');
  if (detail !== undefined) expect(ack.error.detail).toBe(detail);
  // The same refusal also arrives as a server:error event.
  await waitFor(() => worker.errors.length > before, 5_000, 'server:error');
  expect(worker.errors.at(-1)?.code).toBe(code);
}

function withLayer(honest: GradientSubmission, layer: number, bytes: Uint8Array): GradientSubmission {
  const layers = [...honest.layers];
  layers[layer] = bytes;
  return { ...honest, layers };
}

const FAULTS: Record<string, Fault> = {
  'a truncated payload': (w, _r, honest) => {
    const layer = honest.layers[0] as Uint8Array;
    return expectRefusal(w, withLayer(honest, 0, layer.slice(0, layer.length - 3)), 'codec', 'truncated');
  },
  'a NaN': (w, _r, honest) => {
    const layer = (honest.layers[0] as Uint8Array).slice();
    new DataView(layer.buffer).setFloat32(12 + 4 * 100, Number.NaN, true);
    return expectRefusal(w, withLayer(honest, 0, layer), 'codec', 'non-finite');
  },
  'wrong shapes': (w, _r, honest) => {
    const transposed = encodeLayer({ scheme: 'none', shape: [128, 784], values: new Float32Array(784 * 128) }, 0);
    return expectRefusal(w, withLayer(honest, 0, transposed), 'codec', 'shape-mismatch');
  },
  'a wrong layer count': (w, _r, honest) =>
    expectRefusal(w, { ...honest, layers: honest.layers.slice(1) }, 'layer-count'),
  'another scheme': (w, _r, honest) => {
    const ternary = encodeLayer(
      { scheme: 'terngrad', shape: [784, 128], scaler: 1, ternary: new Int8Array(784 * 128) },
      0,
    );
    return expectRefusal(w, withLayer(honest, 0, ternary), 'wrong-scheme');
  },
  'an old version': async (w, round, honest) => {
    await expectRefusal(w, { ...honest, version: round.version - 1 }, 'stale-version');
    await expectRefusal(w, { ...honest, version: round.version + 1 }, 'future-version');
  },
  "another worker's id": (w, _r, honest, { peerId }) =>
    expectRefusal(w, { ...honest, workerId: peerId }, 'not-your-worker'),
  'an unknown run': (w, _r, honest) => expectRefusal(w, { ...honest, runId: 'nope' }, 'unknown-run'),
  'an oversized layer': (w, _r, honest) => {
    const limit = maxLayerBytes('none', [784, 128], 1);
    return expectRefusal(w, withLayer(honest, 0, new Uint8Array(limit + 1)), 'payload-too-large');
  },
  'garbage JSON': async (w, _r, honest) => {
    for (const garbage of [
      'garbage',
      42,
      null,
      [1, 2, 3],
      { runId: 5 },
      { ...honest, layers: [[1, 2, 3]] },
      { ...honest, loss: 'NaN' },
    ]) {
      await expectRefusal(w, garbage, 'bad-message');
    }
    await expectRefusal(w, { ...honest, layerStats: honest.layerStats.slice(1) }, 'bad-stats');
    // The indicator of layer 2 (dense2.weight, 128×10) must be a number in [√(138/1280), √138] ≈ [0.33, 11.7].
    const withIndicator = (indicator: unknown) => ({
      ...honest,
      layerStats: honest.layerStats.map((s, l) => (l === 2 ? { ...s, indicator } : s)),
    });
    await expectRefusal(w, withIndicator('0.5'), 'bad-message');
    await expectRefusal(w, withIndicator(-1), 'bad-message');
    await expectRefusal(w, withIndicator(Number.POSITIVE_INFINITY), 'bad-message');
    await expectRefusal(w, withIndicator(12), 'bad-stats');
    await expectRefusal(w, withIndicator(0.3), 'bad-stats');
  },
  'a message above maxHttpBufferSize, from another socket': async (_w, _r, _h, { server }) => {
    const intruder = await connectClient(server.url);
    const closed = new Promise<string>((resolve) => intruder.once('disconnect', resolve));
    intruder.emit('gradient:submit', {
      blob: new Uint8Array(server.app.maxMessageBytes + 1024),
    } as unknown as GradientSubmission);
    // socket.io drops such a connection without an event (over maxHttpBufferSize); the server goes on.
    expect(await closed).toMatch(/transport/);
  },
  'a malformed socket.io packet, from another socket': async (_w, _r, _h, { server }) => {
    const intruder = await connectClient(server.url);
    const closed = new Promise<string>((resolve) => intruder.once('disconnect', resolve));
    (intruder.io.engine as unknown as { write(data: string): void }).write('2[not json');
    expect(await closed).toBeTruthy();
  },
  'a flood of messages, from another socket': async (_w, _r, _h, { server }) => {
    const intruder = await connectClient(server.url);
    const codes: string[] = [];
    intruder.on('server:error', (error) => codes.push(error.code));
    for (let i = 0; i < 200; i++) intruder.emit('gradient:submit', {} as GradientSubmission);
    await waitFor(() => codes.length === 200, 10_000, 'every refusal');
    expect(codes).toContain('rate-limited');
    expect(codes).toContain('bad-message');
    intruder.disconnect();
  },
};

describe('faults', () => {
  let baseline: Buffer;

  beforeAll(async () => {
    const { params, server } = await trainWith();
    baseline = params;
    await server.close();
    removeDataDir(server.dataDir);
  });

  for (const [name, fault] of Object.entries(FAULTS)) {
    it(`refuses ${name} and applies nothing from it`, async () => {
      let ran = false;
      const { params, server } = await trainWith(async (...args) => {
        await fault(...args);
        ran = true;
      });
      await server.close();
      removeDataDir(server.dataDir);
      expect(ran).toBe(true);
      expect(params.equals(baseline)).toBe(true);
    });
  }
});

describe('rounds without a worker', () => {
  let server: TestServer;
  afterAll(async () => {
    await server.close();
    removeDataDir(server.dataDir);
  });

  it('closes the round without a worker that disconnects mid-round, with no stall', async () => {
    const { train } = await loadTestData();
    server = await startServer({ defaultRun: false });
    const run = server.app.runs.create({ ...CONFIG, maxRounds: 3 });
    const leaver = new HeadlessTab({
      url: server.url,
      train,
      runId: run.id,
      beforeSubmit: async (worker, round) => {
        if (round.version !== 1) return true;
        worker.stop();
        return false;
      },
    });
    const stayers = [
      new HeadlessTab({ url: server.url, train, runId: run.id }),
      new HeadlessTab({ url: server.url, train, runId: run.id }),
    ];
    await leaver.start();
    for (const w of stayers) await w.start();
    run.start();
    await waitFor(() => run.status === 'finished', 30_000, 'the run to finish');
    // Round 1 closed when the leaver left, not at its deadline (a minute): nobody waited for it.
    expect(run.history[1]!.durations.totalMs).toBeLessThan(CONFIG.roundDeadlineMs);
    expect(run.history.map((m) => [m.participants, m.contributors])).toEqual([
      [3, 3],
      [3, 2],
      [2, 2],
    ]);
    for (const w of stayers) w.stop();
    expect(server.errors).toEqual([]);
  });

  it('closes at the deadline once the quorum is in, and refuses the straggler afterwards', async () => {
    await server.close();
    removeDataDir(server.dataDir);
    const { train } = await loadTestData();
    server = await startServer({ defaultRun: false });
    const run = server.app.runs.create({
      ...CONFIG,
      maxRounds: 2,
      roundDeadlineMs: 400,
      quorum: { fraction: 0.5, minimum: 1 },
    });
    let straggled: GradientSubmission | null = null;
    const straggler = new HeadlessTab({
      url: server.url,
      train,
      runId: run.id,
      beforeSubmit: async (_worker, round, honest) => {
        if (round.version !== 0) return true;
        straggled = honest;
        return false;
      },
    });
    const others = [
      new HeadlessTab({ url: server.url, train, runId: run.id }),
      new HeadlessTab({ url: server.url, train, runId: run.id }),
    ];
    await straggler.start();
    for (const w of others) await w.start();
    run.start();
    await waitFor(() => run.history.length >= 1, 10_000, 'round 0 to close');
    expect(run.history[0]).toMatchObject({ participants: 3, contributors: 2 });
    await waitFor(() => straggled !== null);
    await expectRefusal(straggler, straggled, 'stale-version');
    await waitFor(() => run.status === 'finished', 10_000, 'the run to finish');
    for (const w of [straggler, ...others]) w.stop();
  });

  it('makes a worker that joins mid-round wait for the next round', async () => {
    await server.close();
    removeDataDir(server.dataDir);
    const { train } = await loadTestData();
    server = await startServer({ defaultRun: { ...CONFIG, maxRounds: 3 } });
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const early = new HeadlessTab({
      url: server.url,
      train,
      beforeSubmit: async (_w, round) => {
        if (round.version === 0) await gate;
      },
    });
    await early.start();
    const run = server.app.runs.list()[0]!;
    await waitFor(() => run.round !== null, 10_000, 'round 0 to open');
    const late = new HeadlessTab({ url: server.url, train });
    const seen: number[] = [];
    late.socket.on('round:open', (round) => seen.push(round.version));
    await late.start();
    release();
    await waitFor(() => run.status === 'finished', 30_000, 'the run to finish');
    expect(seen[0]).toBe(1);
    expect(run.history.map((m) => m.contributors)).toEqual([1, 2, 2]);
    early.stop();
    late.stop();
  });
});
