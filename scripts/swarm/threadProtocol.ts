/** The messages between the swarm's main thread and its worker threads (node:worker_threads). */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import type { RunId } from '../../core/protocol';
import type { SwarmBackend } from './options';

/** What a worker thread is started with (its workerData). */
export interface WorkerThreadData {
  readonly url: string;
  readonly runId: RunId;
  /** Workers in this thread: 1 for the swarm, many for the load benchmark. */
  readonly count: number;
  readonly backend: SwarmBackend;
  /** Name prefix; tab i of the thread is `${name}-${i}`. */
  readonly name: string;
}

/** Thread → main. */
export type FromWorkerThread =
  | { readonly type: 'joined'; readonly workerIds: readonly number[] }
  | {
      readonly type: 'stopped';
      readonly accepted: number;
      readonly errors: readonly string[];
      /**
       * Connections its tabs lost while joined, and the reconnections the server recovered (the load threads count
       * them).
       */
      readonly disconnects?: number;
      readonly recoveries?: number;
    }
  | { readonly type: 'failed'; readonly message: string };

/** Main → thread. */
export type ToWorkerThread = { readonly type: 'stop' };

/**
 * This worker thread's workerData and its parent port; throws naming `entry` when the file is not run as a worker
 * thread.
 */
export function workerThreadPort<Data>(entry: string): { data: Data; port: MessagePort } {
  if (parentPort === null) throw new Error(`${entry} runs only as a worker thread`);
  return { data: workerData as Data, port: parentPort };
}
