/**
 * A process's heartbeat and its leader lease, kept alive from a worker
 * thread with its own Redis connection (docs/scaling.md, "The leader"), so
 * that a main thread busy decoding a burst of gradients for seconds loses
 * neither. The main thread touches a shared clock (the pulse) every
 * PULSE_EVERY_MS; the thread renews the heartbeat, the inbox and the lease
 * (when this process holds one) every RENEW_EVERY_MS while the pulse is
 * younger than LIVENESS_MS, and stops renewing once it is not: a main thread
 * stuck that long is as good as dead, and its lease and heartbeat lapse
 * LEASE_TTL_MS later. A process that dies takes the thread with it, so a
 * crash is noticed within LEASE_TTL_MS as before.
 */
import type { Worker } from 'node:worker_threads';
import { startTsWorker } from '../tsWorker';

/** How often the main thread touches the pulse (ms). */
const PULSE_EVERY_MS = 250;
/** A main thread silent this long no longer counts as alive (ms). */
export const LIVENESS_MS = 15_000;

/** What the thread is started with. */
export interface KeepaliveData {
  readonly redisUrl: string;
  readonly namespace: string;
  readonly processId: string;
  /** One BigInt64: Date.now() of the main thread's last pulse. */
  readonly pulse: SharedArrayBuffer;
  readonly livenessMs: number;
}

/** Main → thread. */
export type ToKeepalive = { readonly type: 'lease'; readonly value: string | null } | { readonly type: 'stop' };

/** Thread → main. */
export type FromKeepalive =
  /** The first heartbeat is in Redis. */
  | { readonly type: 'ready' }
  /** The heartbeat had lapsed before this renewal (the leader may have written this process off). */
  | { readonly type: 'lapsed' }
  /** The lease `value` is no longer this process's. */
  | { readonly type: 'lost'; readonly value: string }
  /** The main thread has been silent for `ms`: renewals stopped until it pulses again. */
  | { readonly type: 'stalled'; readonly ms: number }
  | { readonly type: 'error'; readonly message: string }
  | { readonly type: 'stopped' };

/** What the main thread hears from its keepalive. */
export interface KeepaliveEvents {
  readonly onLapsed: () => void;
  readonly onLost: (value: string) => void;
  readonly log: (line: string) => void;
}

/** The main thread's side of the keepalive thread. */
export class Keepalive {
  readonly #worker: Worker;
  readonly #timer: NodeJS.Timeout;
  readonly #stopped: Promise<void>;

  private constructor(worker: Worker, pulse: BigInt64Array) {
    this.#worker = worker;
    const touch = () => Atomics.store(pulse, 0, BigInt(Date.now()));
    touch();
    this.#timer = setInterval(touch, PULSE_EVERY_MS);
    this.#timer.unref();
    this.#stopped = new Promise((resolve) => worker.once('exit', () => resolve()));
  }

  /** Starts the thread and waits for its first heartbeat. */
  static async start(
    options: Omit<KeepaliveData, 'pulse' | 'livenessMs'> & { readonly livenessMs?: number },
    events: KeepaliveEvents,
  ): Promise<Keepalive> {
    const pulse = new SharedArrayBuffer(8);
    const data: KeepaliveData = { ...options, pulse, livenessMs: options.livenessMs ?? LIVENESS_MS };
    const worker = startTsWorker(new URL('./keepaliveThread.ts', import.meta.url), data);
    const keepalive = new Keepalive(worker, new BigInt64Array(pulse));
    let ready = false;
    await new Promise<void>((resolve, reject) => {
      worker.on('error', (error) => {
        if (!ready) reject(new Error('the keepalive thread failed to start', { cause: error }));
        else events.log(`process ${options.processId}: keepalive thread failed: ${error.message}`);
      });
      worker.once('exit', (code) => {
        if (!ready) reject(new Error(`the keepalive thread exited (code ${code}) before its first heartbeat`));
      });
      worker.on('message', (message: FromKeepalive) => {
        try {
          switch (message.type) {
            case 'ready':
              ready = true;
              return resolve();
            case 'lapsed':
              return events.onLapsed();
            case 'lost':
              return events.onLost(message.value);
            case 'stalled':
              return events.log(
                `process ${options.processId}: main thread silent for ${(message.ms / 1000).toFixed(1)} s; ` +
                  `heartbeat and lease no longer renewed`,
              );
            case 'error':
              return events.log(`process ${options.processId}: keepalive: ${message.message}`);
          }
        } catch (error) {
          events.log(`process ${options.processId}: keepalive event failed: ${(error as Error).message}`);
        }
      });
    });
    return keepalive;
  }

  /** Renew this lease from now on (null: none). */
  hold(value: string | null): void {
    this.#worker.postMessage({ type: 'lease', value } satisfies ToKeepalive);
  }

  /** Stops renewing and ends the thread (the heartbeat and lease are the caller's to delete). */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#worker.postMessage({ type: 'stop' } satisfies ToKeepalive);
    const forced = setTimeout(() => void this.#worker.terminate(), 5_000);
    await this.#stopped;
    clearTimeout(forced);
  }
}
