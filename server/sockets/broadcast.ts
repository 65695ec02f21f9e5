/**
 * The run hooks over socket.io: round:open to exactly the participants'
 * sockets (one broadcast per distinct message, so each is encoded once for
 * all its recipients: the model, the sync, the relayed update),
 * metrics and round:closed to the run's room and the dashboards, run:state
 * coalesced to one per run per event-loop turn, and a checkpoint per round.
 */
import { runRoom, type RunId } from '../../core/protocol';
import { DASHBOARD_ROOM, type AppServer } from './io';
import type { Run, RunHooks } from '../run/run';
import type { RunRegistry } from '../run/runs';
import type { WorkerRegistry } from '../run/workers';

/** How a cluster's leader changes the hooks (docs/scaling.md); one process leaves them as they are. */
export interface BroadcastOptions {
  /** Persist in roundClosed (false when commitRound persisted already). */
  readonly persistOnClose?: boolean;
  /** Whether any dashboard may listen (the dashboards room of this process by default). */
  readonly anyDashboards?: () => boolean;
  /** run:state at most this often per run (ms); once per event-loop turn by default. */
  readonly stateEveryMs?: number;
}

/** Builds the hooks; `registry` is read late because it is built with these hooks. */
export function createBroadcastHooks(
  io: AppServer,
  workers: WorkerRegistry,
  registry: () => RunRegistry,
  options: BroadcastOptions = {},
): RunHooks {
  const pendingState = new Map<RunId, Run>();
  let flushScheduled = false;
  const anyDashboards = options.anyDashboards ?? (() => (io.sockets.adapter.rooms.get(DASHBOARD_ROOM)?.size ?? 0) > 0);

  const flushState = () => {
    flushScheduled = false;
    const runs = [...pendingState.values()];
    pendingState.clear();
    if (!anyDashboards()) return;
    for (const run of runs) io.to(DASHBOARD_ROOM).emit('run:state', run.summary());
  };

  return {
    openRound(_run, deliveries) {
      for (const { workers: recipients, message } of deliveries) {
        const sockets: string[] = [];
        for (const workerId of recipients) {
          const socketId = workers.get(workerId)?.socketId;
          if (socketId) sockets.push(socketId);
        }
        if (sockets.length > 0) io.to(sockets).emit('round:open', message);
      }
    },
    roundClosed(run, metrics, contributors) {
      if (options.persistOnClose !== false) registry().persist(run);
      const rooms = [runRoom(run.id), DASHBOARD_ROOM];
      io.to(rooms).emit('metrics:round', metrics);
      io.to(runRoom(run.id)).emit('round:closed', { runId: run.id, version: metrics.version, contributors });
    },
    changed(run) {
      pendingState.set(run.id, run);
      if (!flushScheduled) {
        flushScheduled = true;
        if (options.stateEveryMs === undefined) setImmediate(flushState);
        else setTimeout(flushState, options.stateEveryMs);
      }
    },
  };
}
