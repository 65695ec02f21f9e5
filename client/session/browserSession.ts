/**
 * The session as a tab hosts it: WebGPU or the CPU as chooseBackend decides,
 * digits fetched from the server, the identity kept in localStorage under a
 * Web Lock, a socket to the page's own origin, and the worker store as sink.
 */
import { loadMnist } from '../../core/data';
import type { RunId } from '../../core/protocol';
import { createFetchReader } from '../data/fetchReader';
import { chooseBackend } from '../gpu/runtime/device';
import { socketChannelFactory } from '../net/workerChannel';
import { claimWorkerIdentity } from '../net/workerIdentity';
import type { WorkerStore } from '../ui/store/workerStore';
import { browserName } from './browserName';
import { runWorkerSession, type WorkerSession } from './workerSession';

/** Starts this tab's worker; `runId` is the `?run=` of the page. */
export function startWorkerSession(store: WorkerStore, runId?: RunId): Promise<WorkerSession> {
  return runWorkerSession({
    sink: store.getState(),
    backend: () => chooseBackend(),
    loadData: () => loadMnist(createFetchReader()),
    identity: () => claimWorkerIdentity(),
    openChannel: socketChannelFactory(),
    name: browserName(),
    ...(runId === undefined ? {} : { runId }),
  });
}
