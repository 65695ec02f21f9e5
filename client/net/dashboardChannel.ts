/**
 * The teacher dashboard's connection: subscribes to every run, feeds the
 * dashboard store, and resubscribes after any reconnect that socket.io could
 * not recover (so the charts resync from the server's history). Teacher
 * actions go through `DashboardActions`; components never touch the socket.
 */
import type { RoundMetrics, RunConfigPatch, RunId, RunSummary, WorkerAttack, WorkerId } from '../../core/protocol';
import type { LocalMessage } from '../i18n';
import { openSocket, request, type AppSocket, type RequestError } from './socket';

/** Whether this dashboard may act. */
export type DashboardAuth = 'viewer' | 'teacher' | 'rejected';

/** The link of the dashboard socket. */
export type DashboardLink = 'connecting' | 'connected' | 'reconnecting';

/** What the channel reports, to the dashboard store (client/ui/store implements it). */
export interface DashboardSink {
  setLink(link: DashboardLink): void;
  setAuth(auth: DashboardAuth): void;
  snapshot(runs: readonly RunSummary[], history: Readonly<Record<string, readonly RoundMetrics[]>>): void;
  runState(run: RunSummary): void;
  runDeleted(runId: RunId): void;
  metrics(metrics: RoundMetrics): void;
  setNotice(notice: LocalMessage | null): void;
}

/** The result of a teacher action: done, or why not. */
export type ActionResult<T = object> =
  ({ readonly ok: true } & T) | { readonly ok: false; readonly error: RequestError };

/** Everything a teacher can do, each answered once. */
export interface DashboardActions {
  createRun(config: RunConfigPatch): Promise<ActionResult<{ readonly run: RunSummary }>>;
  startRun(runId: RunId): Promise<ActionResult>;
  pauseRun(runId: RunId): Promise<ActionResult>;
  resumeRun(runId: RunId): Promise<ActionResult>;
  resetRun(runId: RunId): Promise<ActionResult>;
  deleteRun(runId: RunId): Promise<ActionResult>;
  moveWorker(workerId: WorkerId, runId: RunId): Promise<ActionResult>;
  removeWorker(workerId: WorkerId): Promise<ActionResult>;
  /** The classroom attacker toggle: the server scales or sign-flips this worker's estimates (null: honest). */
  setAttack(workerId: WorkerId, attack: WorkerAttack | null): Promise<ActionResult>;
  /** Starts a worker the server simulates in this run (it trains honestly until marked an attacker). */
  addSimulatedWorker(runId: RunId): Promise<ActionResult<{ readonly workerId: WorkerId }>>;
}

/** Opens the dashboard socket (as teacher when `adminToken` is given) and returns the actions. */
export function connectDashboard(store: { getState(): DashboardSink }, adminToken: string | null): DashboardActions {
  const state = () => store.getState();
  const socket: AppSocket = openSocket(adminToken === null ? {} : { adminToken });
  state().setAuth(adminToken === null ? 'viewer' : 'teacher');

  const subscribe = async () => {
    const answer = await request(socket, 'dashboard:subscribe', {});
    if (answer.ok) state().snapshot(answer.runs, answer.history);
    else state().setNotice({ key: 'dashboard.subscribeFailed', params: { detail: answer.error.message } });
  };
  socket.on('connect', () => {
    state().setLink('connected');
    if (!socket.recovered) void subscribe();
  });
  socket.on('disconnect', () => state().setLink('reconnecting'));
  socket.on('connect_error', (error) => {
    if (error.message.startsWith('forbidden') && adminToken !== null) {
      // A wrong token fails the handshake; keep watching as a viewer rather than retrying forever.
      state().setAuth('rejected');
      socket.auth = {};
      socket.connect();
      return;
    }
    state().setLink('reconnecting');
  });
  socket.on('run:state', (run) => state().runState(run));
  socket.on('run:deleted', ({ runId }) => state().runDeleted(runId));
  socket.on('metrics:round', (metrics) => state().metrics(metrics));

  const act = async <T extends object>(pending: Promise<ActionResult<T>>): Promise<ActionResult<T>> => {
    const result = await pending;
    state().setNotice(result.ok ? null : { key: 'common.raw', params: { detail: result.error.message } });
    return result;
  };
  return {
    createRun: (config) => act(request(socket, 'run:create', config)),
    startRun: (runId) => act(request(socket, 'run:start', { runId })),
    pauseRun: (runId) => act(request(socket, 'run:pause', { runId })),
    resumeRun: (runId) => act(request(socket, 'run:resume', { runId })),
    resetRun: (runId) => act(request(socket, 'run:reset', { runId })),
    deleteRun: (runId) => act(request(socket, 'run:delete', { runId })),
    moveWorker: (workerId, runId) => act(request(socket, 'worker:move', { workerId, runId })),
    removeWorker: (workerId) => act(request(socket, 'worker:remove', { workerId })),
    setAttack: (workerId, attack) => act(request(socket, 'worker:attack', { workerId, attack })),
    addSimulatedWorker: (runId) => act(request(socket, 'worker:simulate', { runId })),
  };
}
