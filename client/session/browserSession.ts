/**
 * The session as a tab hosts it: in a dedicated Web Worker
 * (sessionWorker.ts), so training never blocks the page (docs/design.md,
 * "The tab's threads"). The page claims the identity (localStorage and a
 * Web Lock, which workers lack), starts the worker with the page's address,
 * applies the store writes it posts once per animation frame, and keeps the
 * keys the server issues.
 */
import type { RunId } from '../../core/protocol';
import { claimWorkerIdentity } from '../net/workerIdentity';
import type { WorkerStore } from '../ui/store/workerStore';
import { browserName } from './browserName';
import { applySinkCall, frameBatcher } from './sessionBridge';
import type { FromSessionWorker, ToSessionWorker } from './sessionMessages';
import type { WorkerSession } from './workerSession';

/** Starts this tab's worker; `runId` is the `?run=` of the page. */
export async function startWorkerSession(store: WorkerStore, runId?: RunId): Promise<WorkerSession> {
  const identity = await claimWorkerIdentity();
  const actions = store.getState();
  const worker = new Worker(new URL('./sessionWorker.ts', import.meta.url), { type: 'module', name: 'atomo-session' });
  const batch = frameBatcher((calls) => {
    for (const call of calls) applySinkCall(actions, call);
  });
  const stopped = (detail: string) => {
    batch.flush();
    actions.setNotice({ key: 'worker.notice.sessionFailed', params: { detail } });
    if (store.getState().phase === 'starting') actions.setPhase('failed');
  };
  worker.addEventListener('message', (event: MessageEvent<FromSessionWorker>) => {
    const message = event.data;
    if (message.type === 'sink') batch.push(message.calls);
    else if (message.type === 'adopt') void identity.adopt(message.key);
    else if (message.type === 'forget') identity.forget();
    else stopped(message.detail);
  });
  // A script that does not load (or an error nothing caught) reaches the page here.
  worker.addEventListener('error', (event) => stopped(event.message || 'the training worker could not start'));
  const post = (message: ToSessionWorker) => worker.postMessage(message);
  post({
    type: 'start',
    href: location.href,
    name: browserName(),
    workerKey: identity.key,
    ...(runId === undefined ? {} : { runId }),
  });
  return {
    pause: () => post({ type: 'pause' }),
    resume: () => post({ type: 'resume' }),
    close: () => worker.terminate(),
  };
}
