/**
 * Starts swarm worker threads (workerThread.ts under tsx, one isolate each)
 * and waits until every tab in them has joined its run.
 */
import type { Worker } from 'node:worker_threads';
import { startTsWorker } from '../../server/tsWorker';
import type { FromWorkerThread, ToWorkerThread, WorkerThreadData } from './threadProtocol';

/** Running worker threads. */
export interface WorkerThreads {
  /** Worker ids the server gave the tabs, in thread order. */
  readonly workerIds: readonly number[];
  /**
   * Disconnects every tab, releases the devices and ends the threads; returns accepted gradients, refusals seen,
   * connections lost and recovered.
   */
  stop(): Promise<{ accepted: number; errors: string[]; disconnects: number; recoveries: number }>;
  /** Rejects when a thread dies before stop() (a crash would otherwise leave its run waiting for deadlines). */
  readonly crashed: Promise<never>;
}

const ENTRY = new URL('./workerThread.ts', import.meta.url);

/** The next message of a thread (rejects if the thread fails first). */
export function nextMessage<T = FromWorkerThread>(worker: Worker): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: T) => {
      worker.off('error', onError);
      resolve(message);
    };
    const onError = (error: Error) => {
      worker.off('message', onMessage);
      reject(error);
    };
    worker.once('message', onMessage);
    worker.once('error', onError);
  });
}

/**
 * Starts one thread per entry of `threads` on `entry` (the swarm's session
 * thread by default) and resolves once all have joined (rejects if any failed).
 */
export async function startWorkerThreads(
  threads: readonly WorkerThreadData[],
  entry: URL = ENTRY,
): Promise<WorkerThreads> {
  const workers = threads.map((workerData) => startTsWorker(entry, workerData));
  const first = await Promise.allSettled(workers.map((w) => nextMessage(w)));
  const failure = first.find((r) => r.status === 'rejected' || r.value.type !== 'joined');
  if (failure) {
    await Promise.all(workers.map((w) => w.terminate()));
    const reason =
      failure.status === 'rejected'
        ? String(failure.reason)
        : failure.value.type === 'failed'
          ? failure.value.message
          : 'unexpected message';
    throw new Error(`a swarm worker thread failed to join: ${reason}`);
  }
  let stopping = false;
  const crashed = new Promise<never>((_, reject) => {
    for (const worker of workers) {
      worker.once('error', (error) =>
        reject(new Error(`a swarm worker thread crashed: ${error.stack ?? error.message}`)),
      );
      worker.once('exit', (code) => {
        if (!stopping) reject(new Error(`a swarm worker thread exited early (code ${code})`));
      });
    }
  });
  // Callers race it; a rejection nobody awaits (after a normal stop) must not crash the process.
  crashed.catch(() => undefined);
  const workerIds = first.flatMap((r) =>
    r.status === 'fulfilled' && r.value.type === 'joined' ? r.value.workerIds : [],
  );
  return {
    workerIds,
    crashed,
    stop: async () => {
      stopping = true;
      const replies = await Promise.all(
        workers.map(async (worker) => {
          const reply = nextMessage(worker);
          worker.postMessage({ type: 'stop' } satisfies ToWorkerThread);
          const message = await reply;
          // Sockets are closed and Dawn released; end the isolate rather than wait for stray timers.
          await worker.terminate();
          return message;
        }),
      );
      let accepted = 0;
      let disconnects = 0;
      let recoveries = 0;
      const errors: string[] = [];
      for (const reply of replies) {
        if (reply.type === 'stopped') {
          accepted += reply.accepted;
          disconnects += reply.disconnects ?? 0;
          recoveries += reply.recoveries ?? 0;
          errors.push(...reply.errors);
        } else if (reply.type === 'failed') errors.push(reply.message);
      }
      return { accepted, errors, disconnects, recoveries };
    },
  };
}
