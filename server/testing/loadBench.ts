/**
 * Load benchmark: `npx tsx server/testing/loadBench.ts [workers=50] [rounds=20] [scheme=none]`.
 * Prints the aggregator's figures (rounds/s, ingest MB/s) and, for scale, the
 * raw socket.io binary throughput on the same machine: the same number of
 * clients each sending the same bytes per "round" to a bare socket.io server
 * that only acknowledges. Clients and server share one process, as in the
 * load test, so both figures include the clients' cost.
 */
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import { Server } from 'socket.io';
import { io } from 'socket.io-client';
import type { SchemeName } from '../../core/atomo/types';
import { measureLoad } from './load';

async function rawThroughput(clients: number, rounds: number, bytesPerClient: number): Promise<number> {
  const httpServer = createServer();
  const server = new Server(httpServer, { transports: ['websocket'], maxHttpBufferSize: 64 * 1024 * 1024 });
  server.on('connection', (socket) => socket.on('blob', (_data: unknown, ack: () => void) => ack()));
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;
  const sockets = await Promise.all(
    Array.from({ length: clients }, () => {
      const s = io(url, { transports: ['websocket'] });
      return new Promise<typeof s>((resolve) => s.once('connect', () => resolve(s)));
    }),
  );
  const payload = new Uint8Array(bytesPerClient);
  const started = performance.now();
  for (let r = 0; r < rounds; r++) await Promise.all(sockets.map((s) => s.timeout(60_000).emitWithAck('blob', payload)));
  const seconds = (performance.now() - started) / 1000;
  for (const s of sockets) s.disconnect();
  await new Promise<void>((resolve) => void server.close(() => resolve()));
  return (clients * rounds * bytesPerClient) / 1e6 / seconds;
}

const workers = Number(process.argv[2] ?? 50);
const rounds = Number(process.argv[3] ?? 20);
const scheme = (process.argv[4] ?? 'none') as SchemeName;
const figures = await measureLoad(workers, rounds + 1, { scheme });
console.log(JSON.stringify(figures, null, 2));
const perClient = figures.bytesUp / (figures.roundsClosed - 1) / workers;
const raw = await rawThroughput(workers, rounds, Math.round(perClient));
console.log(`raw socket.io binary upload, ${workers} clients × ${Math.round(perClient)} B: ${raw.toFixed(1)} MB/s; aggregator ingest ${figures.ingestMBps.toFixed(1)} MB/s = ${((100 * figures.ingestMBps) / raw).toFixed(0)}% of raw`);
process.exit(0);
