/**
 * Identities created by keyless joins are bounded per address and in total,
 * survive a restart with what they are counted by, and are forgotten once
 * unused for the idle expiry: a script cannot fill the server with workers.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION, asRunId, type Ack, type JoinAccepted } from '../../core/protocol';
import { parseWorkersSnapshot } from '../../core/schema';
import { ProtocolFault } from '../protocol/fault';
import { addressKey, identityLimitsFromEnv } from '../protocol/limits';
import { connectClient, removeDataDir, startServer, waitFor, type TestServer } from '../testing/harness';
import { WorkerRegistry } from './workers';

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof ProtocolFault) return `${error.code}: ${error.message}`;
    throw error;
  }
  return 'created';
}

describe('WorkerRegistry bounds', () => {
  it('refuses a keyless identity beyond the per-address bound, with a message naming the setting', () => {
    const workers = new WorkerRegistry({ maxTotal: 100, maxPerAddress: 2 });
    workers.create(undefined, '10.0.0.1');
    workers.create(undefined, '::ffff:10.0.0.1'); // the same IPv4 host
    expect(refusal(() => workers.create(undefined, '10.0.0.1'))).toMatch(
      /^too-many-workers: your address already holds 2 workers \(MAX_WORKERS_PER_ADDRESS\)/,
    );
    expect(refusal(() => workers.create(undefined, '10.0.0.2'))).toBe('created');
    // One IPv6 host may use any address of its /64: they count together.
    workers.create(undefined, '2001:db8:1:2::a');
    workers.create(undefined, '2001:db8:1:2:ffff::b');
    expect(refusal(() => workers.create(undefined, '2001:db8:1:2:1:2:3:4'))).toMatch(/^too-many-workers/);
    expect(refusal(() => workers.create(undefined, '2001:db8:1:3::a'))).toBe('created');
    // Forgetting one frees its place.
    const first = [...workers.all()][0]!;
    workers.remove(first.workerId);
    expect(refusal(() => workers.create(undefined, '10.0.0.1'))).toBe('created');
  });

  it('refuses beyond the total, whatever the address', () => {
    const workers = new WorkerRegistry({ maxTotal: 3, maxPerAddress: 3 });
    for (const address of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) workers.create(undefined, address);
    expect(refusal(() => workers.create(undefined, '10.0.0.4'))).toMatch(
      /^too-many-workers: the server already holds 3 workers \(MAX_WORKERS\)/,
    );
    expect(workers.size).toBe(3);
  });

  it('expires identities without a socket once unused for the idle time, never one that is connected', () => {
    let now = 1_000;
    const workers = new WorkerRegistry({ idleExpiryMs: 500 }, () => now);
    const idle = workers.create(undefined, '10.0.0.1').identity;
    const connected = workers.create(undefined, '10.0.0.1').identity;
    const used = workers.create(undefined, '10.0.0.1').identity;
    connected.socketId = 'socket-1';
    now = 1_400;
    workers.touch(used);
    now = 1_500;
    expect(workers.expired()).toEqual([]); // exactly the idle time: not yet
    now = 1_501;
    expect(workers.expired().map((w) => w.workerId)).toEqual([idle.workerId]);
    now = 10_000;
    expect(workers.expired().map((w) => w.workerId)).toEqual([idle.workerId, used.workerId]);
  });

  it('keeps the address and last use across a restart, so restored identities still count', () => {
    const before = new WorkerRegistry({ maxPerAddress: 2 }, () => 5_000);
    before.create('a', '10.0.0.1');
    before.create('b', '10.0.0.1');
    const stored = parseWorkersSnapshot(JSON.parse(JSON.stringify(before.snapshot())));
    const after = new WorkerRegistry({ maxPerAddress: 2 }, () => 9_000);
    after.restore(stored, () => false);
    expect([...after.all()].map((w) => [w.name, w.address, w.lastUsedAt])).toEqual([
      ['a', '10.0.0.1', 5_000],
      ['b', '10.0.0.1', 5_000],
    ]);
    expect(refusal(() => after.create(undefined, '10.0.0.1'))).toMatch(/^too-many-workers/);
    expect(after.create(undefined, '10.0.0.9').identity.workerId).toBe(3);
  });

  it(
    'stores a connected identity as used at the moment of the write, ' +
      'so a restart does not expire it before it rejoins',
    () => {
      let now = 1_000;
      const before = new WorkerRegistry({ idleExpiryMs: 500 }, () => now);
      const connected = before.create('all lesson long', '10.0.0.1').identity;
      const gone = before.create('left early', '10.0.0.1').identity;
      connected.socketId = 'socket-1';
      now = 60_000; // the server stops, long after both joined
      const stored = parseWorkersSnapshot(JSON.parse(JSON.stringify(before.snapshot())));
      const after = new WorkerRegistry({ idleExpiryMs: 500 }, () => now + 100);
      after.restore(stored, () => false);
      expect(after.expired().map((w) => w.name)).toEqual([gone.name]);
      expect(after.get(connected.workerId)?.lastUsedAt).toBe(60_000);
    },
  );

  it('reads identities written before they had an address or a last use (their idle time starts at load)', () => {
    const old = { nextId: 3, workers: [{ workerId: 2, keyHash: 'ab'.repeat(32), name: 'w', runId: null }] };
    const workers = new WorkerRegistry({}, () => 7_000);
    workers.restore(parseWorkersSnapshot(old), () => false);
    expect([...workers.all()].map((w) => [w.address, w.lastUsedAt])).toEqual([[null, 7_000]]);
  });

  it('refuses a damaged workers.json, naming what is wrong', () => {
    const good = { workerId: 1, keyHash: 'ab'.repeat(32), name: 'w', runId: null };
    expect(() => parseWorkersSnapshot({ nextId: 2, workers: [{ ...good, keyHash: 'nope' }] })).toThrow(
      /workers\.json workers\.0\.keyHash/,
    );
    expect(() => parseWorkersSnapshot({ nextId: 2, workers: [good, { ...good, name: 'twin' }] })).toThrow(/twice/);
    expect(() => parseWorkersSnapshot({ nextId: -1, workers: [] })).toThrow(/nextId/);
    expect(() => parseWorkersSnapshot([])).toThrow(/workers\.json/);
  });
});

describe('identity settings', () => {
  it('reads the environment, and refuses values that are not positive', () => {
    expect(identityLimitsFromEnv({})).toEqual({});
    expect(
      identityLimitsFromEnv({ MAX_WORKERS: '500', MAX_WORKERS_PER_ADDRESS: '300', WORKER_IDLE_HOURS: '0.5' }),
    ).toEqual({
      maxTotal: 500,
      maxPerAddress: 300,
      idleExpiryMs: 1_800_000,
    });
    expect(() => identityLimitsFromEnv({ MAX_WORKERS_PER_ADDRESS: '0' })).toThrow(
      /MAX_WORKERS_PER_ADDRESS must be a positive integer, got "0"/,
    );
    expect(() => identityLimitsFromEnv({ MAX_WORKERS: '1.5' })).toThrow(/MAX_WORKERS/);
    expect(() => identityLimitsFromEnv({ WORKER_IDLE_HOURS: 'soon' })).toThrow(/WORKER_IDLE_HOURS/);
  });

  it('counts IPv4-mapped IPv6 as IPv4 and IPv6 by its /64', () => {
    expect(addressKey('::ffff:192.168.1.20')).toBe('192.168.1.20');
    expect(addressKey('2001:db8:0:1::7')).toBe(addressKey('2001:0db8:0000:0001:ffff:0:0:1'));
    expect(addressKey('2001:db8:0:1::7')).not.toBe(addressKey('2001:db8:0:2::7'));
  });
});

describe('keyless joins on a live server', () => {
  let server: TestServer;
  afterAll(async () => {
    await server.close();
    removeDataDir(server.dataDir);
  });

  const join = async (workerKey?: string) => {
    const socket = await connectClient(server.url);
    const answer = (await socket.timeout(10_000).emitWithAck('worker:join', {
      protocol: PROTOCOL_VERSION,
      runId: asRunId('default'),
      ...(workerKey === undefined ? {} : { workerKey: workerKey as JoinAccepted['workerKey'] }),
    })) as Ack<JoinAccepted>;
    return { socket, answer };
  };

  it(
    'refuses a third from one address with a clear reason, ' + 'takes rejoins by key, and forgets unused ones',
    async () => {
      // Every socket of a test comes from 127.0.0.1.
      server = await startServer({ identityLimits: { maxPerAddress: 2, idleExpiryMs: 2_000 } });
      const a = await join();
      const b = await join();
      expect([a.answer.ok, b.answer.ok]).toEqual([true, true]);
      const third = await join();
      expect(third.answer).toMatchObject({ ok: false, error: { code: 'too-many-workers', event: 'worker:join' } });
      if (!third.answer.ok)
        expect(third.answer.error.message).toMatch(/your address already holds 2 workers \(MAX_WORKERS_PER_ADDRESS\)/);
      third.socket.close();
      if (!a.answer.ok || !b.answer.ok) throw new Error('joins refused');
      const [first, second] = [a.answer, b.answer];

      // A rejoin with a key creates nothing: it is always taken.
      a.socket.close();
      const back = await join(first.workerKey);
      expect(back.answer).toMatchObject({ ok: true, workerId: first.workerId });
      back.socket.close();

      // Unused (no socket) past the idle time, A is forgotten by the periodic sweep: gone from its run, its key
      // refused.
      const run = server.app.runs.get(asRunId('default'));
      await waitFor(() => server.app.workers.get(first.workerId) === undefined, 10_000, 'the idle identity to expire');
      expect(run.member(first.workerId)).toBeUndefined();
      // B still has its socket: never expired.
      expect(server.app.workers.get(second.workerId)?.socketId).not.toBeNull();
      const stale = await join(first.workerKey);
      expect(stale.answer).toMatchObject({ ok: false, error: { code: 'unknown-worker' } });
      stale.socket.close();
      // Its place is free again.
      const fresh = await join();
      expect(fresh.answer.ok).toBe(true);
      fresh.socket.close();
      b.socket.close();
      expect(server.errors).toEqual([]);
    },
  );
});
