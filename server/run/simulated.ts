/**
 * Workers the server simulates itself, started by the teacher from the
 * dashboard (worker:simulate): each is a member of a run like any tab, with
 * its own identity, slot and shard, and plays its rounds with the tab's
 * own round player (core/training/roundPlayer.ts: the replica, the worker
 * round on the CPU backend) over a transport that calls the run directly
 * instead of a socket. Its gradient goes through the same validation and
 * Run.acceptGradient as a tab's, so the teacher's attack toggle applies to it: a classroom can watch
 * an attacker without a student playing one (docs/design.md, "Robust
 * aggregation").
 *
 * They live only while the server does (never checkpointed) and compute on
 * the server's event loop, one gradient at a time with a turn of the loop
 * between them, so real workers' messages are still served; a run holds at
 * most MAX_SIMULATED_PER_RUN of them.
 */
import type { Dataset } from '../../core/data';
import { type RoundOpen, type RunId, type WorkerAssignment, type WorkerId } from '../../core/protocol';
import {
  RoundPlayer,
  cpuRoundTrainer,
  type RoundTrainer,
  type RoundTransport,
  type SubmitAnswer,
} from '../../core/training/roundPlayer';
import { ProtocolFault } from '../protocol/fault';
import type { Run } from './run';
import type { RunRegistry, WorkerNotifier } from './runs';
import { threadCpuClock } from './threadClock';
import { parseSubmission } from '../protocol/validation';
import type { WorkerIdentity } from './workers';

/** Most simulated workers one run may hold: enough for a lesson, few enough that the server's loop stays responsive. */
export const MAX_SIMULATED_PER_RUN = 16;

/** What a simulated worker is told it computes on (the teacher's workers table shows it). */
const SIMULATED_BACKEND = { kind: 'cpu', detail: 'simulated by the server' } as const;

/** Refusals that are races of the round machine (the round closed or moved on meanwhile), not faults. */
const RACES: ReadonlySet<string> = new Set([
  'stale-version',
  'future-version',
  'round-closed',
  'not-participant',
  'duplicate',
  'wrong-run',
  'unknown-run',
]);

/** The dependencies of the simulated workers. */
export interface SimulatedDeps {
  readonly registry: () => RunRegistry;
  /** The training split; without it the server cannot simulate workers. */
  readonly train: Dataset | null;
  readonly logError: (error: unknown) => void;
  /** Runs fn on a later turn of the event loop. */
  readonly defer: (fn: () => void) => void;
}

/** The workers the server runs itself (worker:simulate), by worker id: each one round player. */
export class ServerSimulatedWorkers {
  readonly #players = new Map<WorkerId, RoundPlayer<RoundTrainer>>();
  readonly #deps: SimulatedDeps;
  #next = 1;

  constructor(deps: SimulatedDeps) {
    this.#deps = deps;
  }

  /** worker:simulate: a new simulated worker joins `runId` (throws ProtocolFault). */
  add(runId: RunId): WorkerId {
    const registry = this.#deps.registry();
    const run = registry.get(runId);
    const train = this.#deps.train;
    if (train === null)
      throw new ProtocolFault('invalid-state', 'this server has no training data, so it cannot simulate workers');
    // The server holds MNIST's training split only (index.ts); a tab or the swarm trains on another dataset.
    if (run.config.dataset !== 'mnist')
      throw new ProtocolFault(
        'invalid-state',
        `simulated workers train on MNIST only; run ${run.id} uses ${run.config.dataset}`,
      );
    const count = run.summary().workers.filter((w) => w.simulated).length;
    if (count >= MAX_SIMULATED_PER_RUN)
      throw new ProtocolFault('invalid-state', `run ${run.id} already has ${MAX_SIMULATED_PER_RUN} simulated workers`);
    const n = this.#next++;
    const { identity, assignment } = registry.joinSimulated(runId, `simulated:${n}`, {
      name: `simulated ${n}`,
      backend: SIMULATED_BACKEND,
    });
    const { workerId } = identity;
    const { defer, logError } = this.#deps;
    const player = new RoundPlayer<RoundTrainer>({
      labels: () => train.labels,
      build: (a, shard) =>
        cpuRoundTrainer(a, train, shard, this.#deps.registry().get(a.runId).layout, threadCpuClock()),
      transport: this.#transport(workerId),
      now,
      events: {
        sent: (round, _here, _result, answer) => {
          if (!answer.ok && !RACES.has(answer.error.code))
            logError(
              new Error(`simulated worker ${workerId}: round ${round.version} refused: ${answer.error.message}`),
            );
        },
        failed: (round, error) =>
          logError(new Error(`simulated worker ${workerId}: round ${round.version} failed`, { cause: error })),
        assignFailed: (error) => logError(new Error(`simulated worker ${workerId}: no trainer`, { cause: error })),
      },
      // A turn of the loop between gradients, so the sockets are served.
      betweenRounds: () => new Promise<void>((resolve) => defer(resolve)),
    });
    this.#players.set(workerId, player);
    void player.assign(assignment);
    return workerId;
  }

  /** Whether `workerId` is one of these. */
  has(workerId: WorkerId): boolean {
    return this.#players.has(workerId);
  }

  /** The run opened a round: the simulated participants among `workers` play it on a later turn of the loop. */
  openRound(run: Run, workers: readonly WorkerId[], message: RoundOpen): void {
    for (const workerId of workers) {
      const player = this.#players.get(workerId);
      if (player === undefined || player.current?.assignment.runId !== run.id) continue;
      this.#deps.defer(() => player.open(message));
    }
  }

  /** Routes the registry's notices: simulated workers follow their assignment or stop; others go to `sockets`. */
  notifier(sockets: WorkerNotifier): WorkerNotifier {
    return {
      assigned: (identity, assignment: WorkerAssignment) => {
        const player = this.#players.get(identity.workerId);
        if (player === undefined) return sockets.assigned(identity, assignment);
        void player.assign(assignment);
      },
      removed: (identity, reason) => {
        if (!this.#players.has(identity.workerId)) return sockets.removed(identity, reason);
        this.#forget(identity);
      },
    };
  }

  /** Stops every simulated worker (the server closes). */
  dispose(): void {
    for (const player of this.#players.values()) player.close();
    this.#players.clear();
  }

  /** The run itself in place of a socket: the same validation and acceptGradient, the same sync request. */
  #transport(workerId: WorkerId): RoundTransport {
    const refusal = (error: unknown): SubmitAnswer => {
      if (error instanceof ProtocolFault) return { ok: false, error: { code: error.code, message: error.message } };
      throw error;
    };
    return {
      submit: async (submission) => {
        try {
          const run = this.#deps.registry().get(submission.runId);
          return { ok: true, bytes: run.acceptGradient(workerId, parseSubmission(submission)).bytes };
        } catch (error) {
          return refusal(error);
        }
      },
      requestModel: (runId) => {
        try {
          this.#deps.registry().get(runId).requestSync(workerId);
        } catch (error) {
          refusal(error);
        }
      },
    };
  }

  #forget(identity: WorkerIdentity): void {
    this.#players.get(identity.workerId)?.close();
    this.#players.delete(identity.workerId);
    // Run deleted with none left: the identity would otherwise linger with no run.
    if (identity.runId === null) this.#deps.registry().forgetIdentity(identity.workerId);
  }
}

const now = () => performance.now();
