/**
 * The aggregator itself, assembled once for one process (server/app.ts) and
 * for a cluster's leader (server/cluster/leadership.ts): the identities, the
 * run registry with its hooks, the server's simulated workers, the teacher's
 * handlers, the socket backend and the /api source; restoring the stored
 * runs and creating the default run. What differs between the two is
 * injected: where checkpoints go, how round:open reaches the sockets, how a
 * closed round's estimates are combined, and what a closed round also does.
 */
import type { Aggregate } from '../core/aggregation';
import type { Dataset } from '../core/data';
import { asRunId, type RunConfigPatch, type WorkerId } from '../core/protocol';
import type { RoundMetrics } from '../core/protocol';
import { createAdminHandlers } from './sockets/admin';
import { createBroadcastHooks, type BroadcastOptions } from './sockets/broadcast';
import type { CheckpointStore, StoredRun } from './persistence/checkpoint';
import { nodeScheduler } from './http/front';
import { registryApiSource, type ApiSource } from './http/api';
import { DASHBOARD_ROOM, type AppServer } from './sockets/io';
import type { IdentityLimits } from './protocol/limits';
import type { ModelRuntime } from './model/model';
import type { OpenRound } from './run/round';
import type { RoundDelivery, Run, RunHooks } from './run/run';
import { RunRegistry, type WorkerNotifier } from './run/runs';
import { ServerSimulatedWorkers } from './run/simulated';
import { createWorkerNotifier, registryBackend, type SocketBackend } from './sockets/sockets';
import { WorkerRegistry, type WorkersSnapshot } from './run/workers';

/** Id of the run the server creates when it starts with none. */
export const DEFAULT_RUN_ID = asRunId('default');

/** Where runs and identities are written: the data directory, or a cluster's Redis. */
export type RunStore = Pick<CheckpointStore, 'saveRun' | 'saveWorkers' | 'deleteRun'>;

/** What the aggregator is built from. */
export interface AggregatorOptions {
  readonly io: AppServer;
  /** Layouts, initial weights, SGD step and held-out evaluation. */
  readonly model: ModelRuntime;
  readonly store: RunStore;
  /** The training split, for the workers the server simulates (worker:simulate); without it they are refused. */
  readonly train?: Dataset | null;
  /** Bounds and idle expiry of the identities keyless joins create. */
  readonly identityLimits?: Partial<IdentityLimits>;
  readonly maxMessageBytes: number;
  readonly logError: (error: unknown) => void;
  /** How the broadcast hooks publish (a cluster's leader publishes always, at most once a second). */
  readonly broadcast?: BroadcastOptions;
  /** How round:open reaches the workers on sockets; socket.io from this process when absent. */
  readonly deliver?: (run: Run, deliveries: readonly RoundDelivery[]) => void;
  /** How a closed round's estimates are combined where other processes hold them (RunDeps.combine). */
  readonly combine?: (run: Run, round: OpenRound) => Promise<Aggregate>;
  /** What a closed round does besides streaming its metrics (a cluster's leader tells every process). */
  readonly roundClosed?: (run: Run, metrics: RoundMetrics, contributors: readonly WorkerId[]) => void;
  /** Makes a closed round durable before anyone hears of it (RunHooks.commitRound). */
  readonly commitRound?: (run: Run, runs: RunRegistry) => Promise<void>;
  /** How the registry reaches a worker's socket; socket.io from this process when absent. */
  readonly notifier?: WorkerNotifier;
}

/** The assembled aggregator. */
export interface Aggregator {
  readonly runs: RunRegistry;
  readonly workers: WorkerRegistry;
  readonly simulated: ServerSimulatedWorkers;
  /** What the socket layer calls (server/sockets/sockets.ts). */
  readonly backend: SocketBackend;
  readonly api: ApiSource;
  /**
   * Rebuilds the stored runs and identities, forgets expired identities, and
   * creates the default run when none is left (unless `defaultRun` is false).
   */
  restore(
    stored: { runs: readonly StoredRun[]; workers: WorkersSnapshot | null },
    defaultRun?: RunConfigPatch | false,
  ): void;
  /** Stops the identity sweep, the simulated workers and every run's timers. */
  dispose(): void;
}

/** Builds the aggregator; call `restore` before any socket connects. */
export function createAggregator(options: AggregatorOptions): Aggregator {
  const { io, logError } = options;
  const workers = new WorkerRegistry(options.identityLimits);
  let registry: RunRegistry | null = null;
  const simulated = new ServerSimulatedWorkers({
    registry: () => registry!,
    train: options.train ?? null,
    logError,
    defer: nodeScheduler.defer,
  });
  const broadcast = createBroadcastHooks(io, workers, () => registry!, options.broadcast);
  const deliver = options.deliver ?? broadcast.openRound;
  const { roundClosed, commitRound } = options;
  const hooks: RunHooks = {
    openRound: (run, deliveries) => {
      deliver(run, deliveries);
      for (const { workers: recipients, message } of deliveries) simulated.openRound(run, recipients, message);
    },
    roundClosed: (run, metrics, contributors) => {
      broadcast.roundClosed(run, metrics, contributors);
      roundClosed?.(run, metrics, contributors);
    },
    changed: (run) => broadcast.changed(run),
    ...(commitRound === undefined ? {} : { commitRound: (run: Run) => commitRound(run, registry!) }),
  };
  registry = new RunRegistry({
    runDeps: {
      model: options.model,
      hooks,
      scheduler: nodeScheduler,
      onError: logError,
      ...(options.combine === undefined ? {} : { combine: options.combine }),
    },
    workers,
    store: options.store,
    notifier: simulated.notifier(options.notifier ?? createWorkerNotifier(io)),
    maxMessageBytes: options.maxMessageBytes,
    now: Date.now,
  });
  const runs = registry;
  const admin = createAdminHandlers(runs, {
    onDeleted: (runId) => io.to(DASHBOARD_ROOM).emit('run:deleted', { runId }),
    simulate: (runId) => simulated.add(runId),
  });

  // Unused identities are forgotten on a timer too, not only when a keyless join needs room.
  const sweep = setInterval(
    () => {
      try {
        runs.expireIdentities();
      } catch (error) {
        logError(new Error('expiring unused identities failed', { cause: error }));
      }
    },
    Math.max(1000, Math.min(workers.limits.idleExpiryMs / 4, 10 * 60_000)),
  );
  sweep.unref();

  return {
    runs,
    workers,
    simulated,
    backend: registryBackend(runs, workers, admin),
    api: registryApiSource(runs),
    restore: (stored, defaultRun) => {
      runs.restore(stored.runs, stored.workers);
      runs.expireIdentities();
      if (runs.size === 0 && defaultRun !== false) runs.create(defaultRun ?? {}, 'running', DEFAULT_RUN_ID);
    },
    dispose: () => {
      clearInterval(sweep);
      simulated.dispose();
      for (const run of runs.list()) run.dispose();
    },
  };
}
