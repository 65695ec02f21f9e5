/**
 * Every byte, both ways: two headless workers (the tab's own session and
 * socket channel) train a short run through a TCP proxy that counts every
 * byte on their connections, HTTP upgrade included. The run's traffic as the
 * server reports it, and each worker's own count, must both match the
 * proxy's within 2% (the upgrade handshake, about 400 bytes a connection,
 * and the first engine.io/socket.io packets before the meters attach are the
 * only frames not metered; a round's model alone is ~400 kB).
 */
import { createConnection, createServer, type AddressInfo, type Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { NO_TRAFFIC, addTraffic, totalBytes, type WireTraffic } from '../../core/traffic/frames';
import { socketChannelFactory } from '../../client/net/workerChannel';
import { memoryIdentity } from '../../client/net/workerIdentity';
import {
  quietSink,
  runWorkerSession,
  type WorkerSession,
  type WorkerSessionSink,
} from '../../client/session/workerSession';
import { loadMnist } from '../../core/data';
import { createFileReader } from '../../server/data/fileReader';
import { waitFor } from '../../server/local';
import { inProcessServerPerFile } from './testing';

/** A TCP proxy in front of `port` that counts the bytes of every connection, both ways. */
async function countingProxy(port: number): Promise<{ server: Server; url: string; bytes: () => number }> {
  let bytes = 0;
  const server = createServer((client) => {
    const upstream = createConnection({ port, host: '127.0.0.1' });
    client.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bytes: () => bytes };
}

function countingSink(): { sink: WorkerSessionSink; traffic: () => WireTraffic } {
  let traffic = NO_TRAFFIC;
  return {
    sink: {
      ...quietSink(),
      setTraffic: (t) => {
        traffic = t;
      },
    },
    traffic: () => traffic,
  };
}

const server = inProcessServerPerFile();

describe('traffic both ways', () => {
  it(
    "a run's total on the server equals the bytes its workers' connections carried, within 2%, " +
      "and so does each worker's own count",
    async () => {
      const proxy = await countingProxy(server().port);
      const run = server().app.runs.create({
        name: 'traffic',
        // The float32 model every round, so the model frames dominate the wire (the comment above).
        downlink: 'full',
        scheme: 'atomo-svd',
        budget: 2,
        shards: 2,
        maxRounds: 4,
        evalEvery: 4,
        roundDeadlineMs: 60_000,
      });
      const data = await loadMnist(createFileReader());
      const workers = await Promise.all(
        [0, 1].map(async (i) => {
          const counted = countingSink();
          const session: WorkerSession = await runWorkerSession({
            sink: counted.sink,
            backend: async () => ({ kind: 'cpu', reason: 'test' }),
            loadData: async () => data,
            identity: async () => memoryIdentity(),
            openChannel: socketChannelFactory({ url: proxy.url }),
            name: `traffic-${i}`,
            runId: run.id,
            showDigits: false,
          });
          return { session, counted };
        }),
      );
      try {
        await waitFor(
          () => run.summary().workers.filter((w) => w.connected).length === 2,
          30_000,
          'both workers joined',
        );
        run.start();
        await waitFor(() => run.status === 'finished', 120_000, 'the run to finish');
        // Let the last metrics and acks arrive, until the proxy sees nothing new for a while.
        let last = -1;
        await waitFor(
          () => {
            const now = proxy.bytes();
            const settled = now === last;
            last = now;
            return settled;
          },
          10_000,
          'the wire to go quiet',
        );
        const wire = proxy.bytes();
        const serverTotal = totalBytes(run.summary().traffic);
        expect(wire).toBeGreaterThan(4 * 2 * 400_000); // four rounds of the float32 model to two workers
        expect(Math.abs(serverTotal - wire) / wire).toBeLessThan(0.02);
        const clientTotal = totalBytes(workers.map((w) => w.counted.traffic()).reduce(addTraffic, NO_TRAFFIC));
        // Each worker's count is taken after its last gradient's ack; the last metrics broadcast may come after it.
        expect(Math.abs(clientTotal - wire) / wire).toBeLessThan(0.02);
        const summary = run.summary().traffic;
        expect(summary.modelDown).toBeGreaterThan(summary.controlDown);
        expect(summary.gradientUp).toBeGreaterThan(0);
        const history = run.history;
        expect(history.at(-1)!.cumulativeTraffic.modelDown).toBe(
          history.reduce((sum, m) => sum + m.traffic.modelDown, 0),
        );
      } finally {
        for (const w of workers) w.session.close();
        proxy.server.close();
      }
    },
  );
});
