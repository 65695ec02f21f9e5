/**
 * Connection state recovery across processes (docs/scaling.md, "Sockets
 * across processes"): a tab behind the cluster's one address is cut off
 * from the process it was on and its reconnection lands on another. The
 * old process saved the session in Redis, so the new one restores it: the
 * same socket id, its run's room, its worker, and the room packets it
 * missed meanwhile (round:closed and metrics:round of the round that closed
 * without it), replayed from the adapter's stream. The worker then trains
 * in the next round through its new process, and no version is lost.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectSocket, type AppSocket } from '../../client/net/socket';
import { encodeLayer } from '../../core/codec';
import type { ModelLayout } from '../../core/model/layout';
import { PROTOCOL_VERSION, runRoom, type GradientSubmission, type RoundOpen, type RunId } from '../../core/protocol';
import { startTestCluster, type TestCluster } from '../testing/cluster';
import { waitFor } from '../testing/harness';
import { joinRaw } from '../testing/rawWorker';

/** This project's test port block (3650-3699) for this test's Redis. */
const REDIS_PORT = 3671;

/**
 * The cluster's one address, as the kernel's shared port is: each new TCP
 * connection goes to the current target; while held, new connections wait.
 */
interface Front {
  readonly url: string;
  /** Sends new connections to `port` from now on, once released. */
  hold(port: number): void;
  release(): void;
  /** Closes every connection through it (both sides see the transport close). */
  cut(): void;
  /** Cuts every connection, the waiting ones too, and stops listening. */
  close(): Promise<void>;
}

async function startFront(port: number): Promise<Front> {
  let target = port;
  let held = false;
  const waiting: Socket[] = [];
  const open = new Set<Socket>();
  const forward = (client: Socket) => {
    const upstream = createConnection(target, '127.0.0.1');
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      open.add(from);
      from.pipe(to);
      from.on('error', () => to.destroy());
      from.on('close', () => {
        open.delete(from);
        to.destroy();
      });
    }
  };
  const server: Server = createServer((client) => (held ? waiting.push(client) : forward(client)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hold: (next) => {
      target = next;
      held = true;
    },
    release: () => {
      held = false;
      for (const client of waiting.splice(0)) forward(client);
    },
    cut: () => {
      for (const socket of open) socket.destroy();
    },
    close: () => {
      for (const socket of [...open, ...waiting.splice(0)]) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A small honest gradient (scheme none). */
function gradient(layout: ModelLayout, runId: RunId, workerId: number, version: number): GradientSubmission {
  return {
    runId,
    workerId: workerId as GradientSubmission['workerId'],
    version: version as GradientSubmission['version'],
    layers: layout.tensors.map((t, layer) =>
      encodeLayer({ scheme: 'none', shape: t.shape, values: new Float32Array(t.size).fill(1e-3) }, layer),
    ),
    loss: 1,
    layerStats: layout.tensors.map(() => ({ closedForm: 0, realised: 0, gradientNormSq: 1 })),
    computeMs: 1,
  };
}

const portOf = (url: string) => Number(new URL(url).port);

describe('a tab that reconnects to another process', () => {
  let cluster: TestCluster;
  let front: Front;
  /** Sockets the test opens, disconnected even when it fails half-way. */
  const sockets: { disconnect(): unknown }[] = [];
  beforeAll(async () => {
    cluster = await startTestCluster(2, REDIS_PORT, 'recovery-test');
    front = await startFront(portOf(cluster.members[0]!.url));
  });
  afterAll(async () => {
    for (const socket of sockets) socket.disconnect();
    await front?.close();
    await cluster?.close();
  });

  it('gets its id, rooms, worker and missed room packets back, and trains in the next round', async () => {
    const [a, b] = cluster.members;
    const leader = await cluster.leader();
    const run = leader.registry.create({
      scheme: 'none',
      maxRounds: 8,
      evalEvery: 1000,
      roundDeadlineMs: 60_000,
      quorum: { fraction: 1, minimum: 1 },
    });
    const runId = run.id;

    // The tab, through the front (on A for now), with what it hears.
    const tab: AppSocket = await connectSocket(front.url, { reconnect: true });
    sockets.push(tab);
    const opened: RoundOpen[] = [];
    const closed: number[] = [];
    const metrics: number[] = [];
    tab.on('round:open', (round) => opened.push(round));
    tab.on('round:closed', (event) => closed.push(event.version));
    tab.on('metrics:round', (m) => metrics.push(m.version));
    const joined = await tab.timeout(10_000).emitWithAck('worker:join', { protocol: PROTOCOL_VERSION, runId });
    if (!joined.ok) throw new Error(joined.error.message);
    expect(a!.member.io.sockets.sockets.has(tab.id!)).toBe(true);
    // Another worker, on B, keeps the run going while the tab is away.
    const other = await joinRaw(b!.url, runId);
    sockets.push(other.socket);
    const submit = async (socket: AppSocket, workerId: number, version: number) => {
      const ack = await socket
        .timeout(30_000)
        .emitWithAck('gradient:submit', gradient(run.layout, runId, workerId, version));
      expect(ack.ok).toBe(true);
    };
    run.start();

    // Round 0 with both; the tab hears it close (a room broadcast: its client now holds a stream offset).
    await waitFor(() => opened.length === 1, 10_000, 'round 0 at the tab');
    await submit(tab, joined.workerId, 0);
    expect((await other.nextRound()).version).toBe(0);
    await submit(other.socket, other.accepted.workerId, 0);
    await waitFor(() => closed.includes(0), 10_000, 'round:closed 0 at the tab');
    await waitFor(() => opened.length === 2, 10_000, 'round 1 at the tab');

    // Cut the tab off A; its reconnection waits, then goes to B.
    const socketId = tab.id;
    front.hold(portOf(b!.url));
    front.cut();
    await waitFor(() => !tab.connected, 10_000, 'the tab to notice the cut');
    // Round 1 closes without it (it left the round), so its room hears round:closed 1 while it is away.
    expect((await other.nextRound()).version).toBe(1);
    await submit(other.socket, other.accepted.workerId, 1);
    await waitFor(() => run.history.length === 2, 10_000, 'round 1 to close without the tab');
    expect(run.history[1]!.contributors).toBe(1);
    expect(closed).not.toContain(1);
    front.release();
    await waitFor(() => tab.connected, 20_000, 'the tab to reconnect');

    // Recovered on B: the same socket, its worker, its run's room.
    expect(tab.recovered).toBe(true);
    expect(tab.id).toBe(socketId);
    const onB = b!.member.io.sockets.sockets.get(socketId!);
    expect(onB?.recovered).toBe(true);
    expect(onB?.data.workerId).toBe(joined.workerId);
    expect(onB?.rooms.has(runRoom(runId))).toBe(true);
    expect(a!.member.io.sockets.sockets.has(socketId!)).toBe(false);
    // The packets it missed, replayed by B from Redis.
    await waitFor(
      () => closed.includes(1) && metrics.includes(1),
      10_000,
      'the missed round:closed and metrics:round of round 1',
    );

    // No lost round: the other worker keeps sending; the tab is in the next round it is sent, through B.
    const seen = opened.length;
    let running = true;
    const keepSending = (async () => {
      while (running) {
        const round = await other.nextRound(1_000).catch(() => null);
        if (round !== null && running) await submit(other.socket, other.accepted.workerId, round.version);
      }
    })();
    await waitFor(() => opened.length > seen, 30_000, 'a round:open for the tab from B');
    const back = opened[opened.length - 1]!;
    expect(back.version).toBeGreaterThanOrEqual(2);
    await submit(tab, joined.workerId, back.version);
    await waitFor(() => run.history.length > back.version, 10_000, `round ${back.version} to close`);
    running = false;
    expect(run.history[back.version]!.contributors).toBe(2);
    expect(run.history.map((m) => m.version)).toEqual(run.history.map((_, i) => i));
    run.pause();
    other.close();
    await keepSending;
    tab.disconnect();
    expect(cluster.errors).toEqual([]);
  });
});
