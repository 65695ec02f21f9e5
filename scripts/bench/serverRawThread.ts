/**
 * Worker thread of the server benchmark's ceiling: `count` bare socket.io
 * clients that, on each 'round' message from the main thread, send one
 * binary payload each and wait for the acknowledgement (or the echo).
 */
import { connectSocket } from '../../client/net/socket';
import { workerThreadPort } from '../swarm/threadProtocol';

/** workerData of a raw client thread. */
export interface RawThreadData {
  readonly url: string;
  readonly count: number;
  readonly bytes: number;
}

/** Main → thread: one round of sends; or stop. Thread → main: ready, done, stopped. */
export type RawThreadMessage = { readonly type: 'round' } | { readonly type: 'stop' };

const { data, port } = workerThreadPort<RawThreadData>('serverRawThread.ts');

// Bare sockets: the bench's echo server answers 'blob', an event outside the protocol's types.
type BlobSocket = {
  timeout(ms: number): { emitWithAck(event: 'blob', payload: Uint8Array): Promise<unknown> };
  disconnect(): void;
};
const sockets = (await Promise.all(
  Array.from({ length: data.count }, () => connectSocket(data.url)),
)) as unknown as BlobSocket[];
const payload = new Uint8Array(data.bytes);
port.postMessage({ type: 'ready' });
port.on('message', (message: RawThreadMessage) => {
  if (message.type === 'stop') {
    for (const socket of sockets) socket.disconnect();
    port.postMessage({ type: 'stopped' });
    port.close();
    return;
  }
  void Promise.all(sockets.map((socket) => socket.timeout(120_000).emitWithAck('blob', payload))).then(() =>
    port.postMessage({ type: 'done' }),
  );
});
