/**
 * The messages between a tab and the dedicated Web Worker that hosts its
 * session (sessionWorker.ts): the page starts, pauses and resumes the
 * session; the worker sends back the session's store writes, as data, and
 * asks the page to keep or forget the worker key (localStorage and Web Locks
 * live on the page).
 */
import type { RunId, WorkerKey } from '../../core/protocol';
import type { WorkerActions } from '../ui/store/workerStore';

/** One store write the session made: the action's name and its one argument. */
export type SinkCall = {
  [K in keyof WorkerActions]-?: { readonly action: K; readonly arg: Parameters<NonNullable<WorkerActions[K]>>[0] };
}[keyof WorkerActions];

/** What the page sends the session's worker. */
export type ToSessionWorker =
  | {
      readonly type: 'start';
      /** The page's address: `?cpu`, `?webgpu` and `?run=` are read from it. */
      readonly href: string;
      /** The browser's name, for the teacher's workers table. */
      readonly name: string;
      readonly runId?: RunId;
      /** The key the page claimed (free in the pool and locked), or null for a new identity. */
      readonly workerKey: WorkerKey | null;
    }
  | { readonly type: 'pause' }
  | { readonly type: 'resume' };

/** What the session's worker sends the page. */
export type FromSessionWorker =
  | { readonly type: 'sink'; readonly calls: readonly SinkCall[] }
  /** The server issued this key: keep it in the pool and hold its lock. */
  | { readonly type: 'adopt'; readonly key: WorkerKey }
  /** The server no longer knows the key: drop it from the pool. */
  | { readonly type: 'forget' }
  /** The session could not start (or died); in English, for the notice. */
  | { readonly type: 'failed'; readonly detail: string };
