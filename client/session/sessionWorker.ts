/**
 * The dedicated Web Worker that hosts a tab's session (docs/design.md, "The
 * tab's threads"): the socket, the trainer and the GPU device live here, so
 * the page's main thread only renders. It runs the one session,
 * runWorkerSession, with what a worker has: WebGPU requested here
 * (navigator.gpu exists in dedicated workers) or the CPU, the run's images
 * fetched from the server, a socket to the page's origin, the identity the
 * page claimed, and a sink that posts the store writes to the page.
 */
import { loadMnist } from '../../core/data';
import type { WorkerKey } from '../../core/protocol';
import { createFetchReader } from '../data/fetchReader';
import { chooseBackend, webgpuRequestedByUrl } from '../gpu/runtime/device';
import { socketChannelFactory } from '../net/workerChannel';
import { memoryIdentity, type IdentityStore } from '../net/workerIdentity';
import { postingSink } from './sessionBridge';
import type { FromSessionWorker, ToSessionWorker } from './sessionMessages';
import { runWorkerSession, type WorkerSession } from './workerSession';

/** The worker's global scope, as far as this file uses it (the project's lib is the DOM's, not WebWorker's). */
interface WorkerScope {
  postMessage(message: FromSessionWorker, options: { transfer: Transferable[] }): void;
  addEventListener(type: 'message', listener: (event: MessageEvent<ToSessionWorker>) => void): void;
}
const scope = globalThis as unknown as WorkerScope;
const post = (message: FromSessionWorker, transfer: Transferable[] = []) => scope.postMessage(message, { transfer });

/** The key the page claimed; the page keeps what the server issues (localStorage and Web Locks are the page's). */
function pageIdentity(key: WorkerKey | null): IdentityStore {
  const held = memoryIdentity(key);
  return {
    get key() {
      return held.key;
    },
    async adopt(next) {
      if (next !== held.key) post({ type: 'adopt', key: next });
      await held.adopt(next);
    },
    forget() {
      post({ type: 'forget' });
      held.forget();
    },
  };
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

let session: Promise<WorkerSession> | null = null;

scope.addEventListener('message', (event) => {
  const message = event.data;
  if (message.type === 'start') {
    if (session !== null) return;
    const sink = postingSink(post);
    const forced = webgpuRequestedByUrl(message.href);
    if (forced) sink.setCalibration({ state: 'forced' });
    session = runWorkerSession({
      sink,
      backend: () => chooseBackend({ url: message.href }),
      calibrate: !forced,
      loadData: (dataset) => loadMnist(createFetchReader(), dataset),
      identity: async () => pageIdentity(message.workerKey),
      openChannel: socketChannelFactory(),
      name: message.name,
      ...(message.runId === undefined ? {} : { runId: message.runId }),
    });
    session.catch((error: unknown) => post({ type: 'failed', detail: errorText(error) }));
    return;
  }
  // Controls sent before the session is up wait for it.
  void session?.then((running) => (message.type === 'pause' ? running.pause() : running.resume()));
});
