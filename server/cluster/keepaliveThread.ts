/**
 * The keepalive thread of a cluster process (keepalive.ts says why): every
 * RENEW_EVERY_MS, while the main thread's pulse is younger than its
 * liveness bound, it renews this process's heartbeat and inbox and, when
 * told of one, the leader lease, on its own Redis connection.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Redis } from 'ioredis';
import { INBOX_TTL_MS, streamNames } from './bus';
import type { FromKeepalive, KeepaliveData, ToKeepalive } from './keepalive';
import { ClusterState, RENEW_EVERY_MS } from './state';

const data = workerData as KeepaliveData;
const port = parentPort;
if (port === null) throw new Error('keepaliveThread.ts runs only as a worker thread');
const post = (message: FromKeepalive) => port.postMessage(message);

const pulse = new BigInt64Array(data.pulse);
// null: a command waits through a brief Redis outage instead of failing (ioredis reconnects by itself).
const redis = new Redis(data.redisUrl, { maxRetriesPerRequest: null });
redis.on('error', () => undefined);
const state = new ClusterState(redis, data.namespace);
const inbox = streamNames(data.namespace).inbox(data.processId);

let lease: string | null = null;
let beaten = false;
let busy = false;
let stalled = false;
let stopping = false;

const renew = async () => {
  if (busy || stopping) return;
  busy = true;
  try {
    const silentMs = Date.now() - Number(Atomics.load(pulse, 0));
    if (silentMs > data.livenessMs) {
      if (!stalled) post({ type: 'stalled', ms: silentMs });
      stalled = true;
      return;
    }
    stalled = false;
    const held = lease;
    const [beating, , kept] = await Promise.all([
      state.heartbeat(data.processId),
      redis.pexpire(inbox, INBOX_TTL_MS),
      held === null ? Promise.resolve(true) : state.renewLeadership(held),
    ]);
    if (!beaten) post({ type: 'ready' });
    else if (!beating) post({ type: 'lapsed' });
    beaten = true;
    if (!kept && held !== null) {
      if (lease === held) lease = null;
      post({ type: 'lost', value: held });
    }
  } catch (error) {
    post({ type: 'error', message: `renewal failed (${(error as Error).message}); retrying` });
  } finally {
    busy = false;
  }
};

const timer = setInterval(() => void renew(), RENEW_EVERY_MS);
void renew();

port.on('message', (message: ToKeepalive) => {
  if (message.type === 'lease') {
    lease = message.value;
    // A new lease is renewed at once: its holder may spend a while loading before the next tick.
    if (lease !== null) void renew();
  } else {
    stopping = true;
    clearInterval(timer);
    redis.disconnect();
    post({ type: 'stopped' });
    port.close();
  }
});
