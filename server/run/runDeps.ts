/**
 * What a run depends on and tells: its hooks, its timers, its model runtime
 * and, in a cluster, how a closed round's estimates are combined.
 */
import type { Aggregate } from '../../core/aggregation';
import type { RoundMetrics, WorkerId } from '../../core/protocol';
import type { ModelRuntime } from '../model/model';
import type { RoundDelivery } from './downlink';
import type { OpenRound } from './round';
import type { Run } from './run';

/** What a run tells the outside world. */
export interface RunHooks {
  /** Send round:open: each message to its workers (at most a few distinct messages per round, each broadcast once). */
  openRound(run: Run, deliveries: readonly RoundDelivery[]): void;
  /** A round closed: stream its metrics, tell its workers, persist the run. */
  roundClosed(run: Run, metrics: RoundMetrics, contributors: readonly WorkerId[]): void;
  /**
   * Makes a closed round durable before anyone hears of it (a cluster's
   * checkpoint, docs/scaling.md): roundClosed and the next round wait for it.
   */
  commitRound?(run: Run): Promise<void>;
  /** Something dashboards show changed (status, members, round progress). */
  changed(run: Run): void;
}

/** Timers, injected so tests could drive time. */
export interface Scheduler {
  now(): number;
  /** Runs fn after ms; returns a cancel function. */
  after(ms: number, fn: () => void): () => void;
  /** Runs fn soon, after the current I/O (lets acks go out before the next round opens). */
  defer(fn: () => void): void;
}

/** The dependencies of a run. */
export interface RunDeps {
  readonly model: ModelRuntime;
  readonly hooks: RunHooks;
  readonly scheduler: Scheduler;
  /** Where failures that are not a client's fault are reported. */
  readonly onError: (error: unknown) => void;
  /**
   * Combines a closed round's estimates when other processes hold them (a
   * cluster's partial sums, docs/scaling.md); absent, the estimates are here
   * and are aggregated at once.
   */
  readonly combine?: (run: Run, round: OpenRound) => Promise<Aggregate>;
}

/** Every gradient of a closing round was lost with the cluster process that held it: the same version opens again. */
export class RoundLost extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RoundLost';
  }
}
