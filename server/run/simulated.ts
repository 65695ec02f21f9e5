/**
 * Workers the server simulates itself, started by the teacher from the
 * dashboard (worker:simulate): each is a member of a run like any tab, with
 * its own identity, slot and shard, and trains honestly with the project's
 * one worker round (core/training/workerRound.ts) on the CPU backend. Its
 * gradient goes through the same validation and Run.acceptGradient as a
 * tab's, so the teacher's attack toggle applies to it: a classroom can watch
 * an attacker without a student playing one (docs/design.md, "Robust
 * aggregation").
 *
 * They live only while the server does (never checkpointed) and compute on
 * the server's event loop, one gradient at a time with a turn of the loop
 * between them, so real workers' messages are still served; a run holds at
 * most MAX_SIMULATED_PER_RUN of them.
 */
import type { Dataset } from '../../core/data';
import { createCpuBackend } from '../../core/model/cpu/backend';
import { type RoundOpen, type RunId, type WorkerAssignment, type WorkerId } from '../../core/protocol';
import { shardIndices } from '../../core/training/shard';
import { createWorkerRound, type WorkerRound } from '../../core/training/workerRound';
import { ProtocolFault } from '../protocol/fault';
import type { Run } from './run';
import type { RunRegistry, WorkerNotifier } from './runs';
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

/** One simulated worker: its assignment, its round function, and the newest round it was asked to train. */
interface SimulatedMember {
  assignment: WorkerAssignment;
  round: WorkerRound | null;
  pending: { run: Run; message: RoundOpen; weights: Float32Array } | null;
  busy: boolean;
}

/** The dependencies of the simulated workers. */
export interface SimulatedDeps {
  readonly registry: () => RunRegistry;
  /** The training split; without it the server cannot simulate workers. */
  readonly train: Dataset | null;
  readonly logError: (error: unknown) => void;
  /** Runs fn on a later turn of the event loop. */
  readonly defer: (fn: () => void) => void;
}

/** The server's simulated workers, by worker id. */
export class SimulatedWorkers {
  readonly #members = new Map<WorkerId, SimulatedMember>();
  readonly #deps: SimulatedDeps;
  #next = 1;

  constructor(deps: SimulatedDeps) {
    this.#deps = deps;
  }

  /** worker:simulate: a new simulated worker joins `runId` (throws ProtocolFault). */
  add(runId: RunId): WorkerId {
    const registry = this.#deps.registry();
    const run = registry.get(runId);
    if (this.#deps.train === null)
      throw new ProtocolFault('invalid-state', 'this server has no training data, so it cannot simulate workers');
    const count = run.summary().workers.filter((w) => w.simulated).length;
    if (count >= MAX_SIMULATED_PER_RUN)
      throw new ProtocolFault('invalid-state', `run ${run.id} already has ${MAX_SIMULATED_PER_RUN} simulated workers`);
    const n = this.#next++;
    const { identity, assignment } = registry.joinSimulated(runId, `simulated:${n}`, {
      name: `simulated ${n}`,
      backend: SIMULATED_BACKEND,
    });
    this.#members.set(identity.workerId, { assignment, round: null, pending: null, busy: false });
    return identity.workerId;
  }

  /** Whether `workerId` is one of these. */
  has(workerId: WorkerId): boolean {
    return this.#members.has(workerId);
  }

  /** The run opened a round: the simulated participants among `workers` train it on the weights of this version. */
  openRound(run: Run, workers: readonly WorkerId[], message: RoundOpen): void {
    let weights: Float32Array | null = null;
    for (const workerId of workers) {
      const member = this.#members.get(workerId);
      if (!member || member.assignment.runId !== run.id) continue;
      // The run's own weights of this version: what a tab decodes from round:open, whatever the downlink encoding.
      weights ??= run.params.slice();
      member.pending = { run, message, weights };
      if (!member.busy) this.#deps.defer(() => void this.#drain(workerId, member));
    }
  }

  /** Routes the registry's notices: simulated workers follow their assignment or stop; others go to `sockets`. */
  notifier(sockets: WorkerNotifier): WorkerNotifier {
    return {
      assigned: (identity, assignment) => {
        const member = this.#members.get(identity.workerId);
        if (member === undefined) return sockets.assigned(identity, assignment);
        member.assignment = assignment;
        member.round = null;
      },
      removed: (identity, reason) => {
        if (!this.#members.has(identity.workerId)) return sockets.removed(identity, reason);
        this.#forget(identity);
      },
    };
  }

  /** Stops every simulated worker (the server closes). */
  dispose(): void {
    for (const member of this.#members.values()) member.pending = null;
    this.#members.clear();
  }

  #forget(identity: WorkerIdentity): void {
    const member = this.#members.get(identity.workerId);
    if (member) member.pending = null;
    this.#members.delete(identity.workerId);
    // Run deleted with none left: the identity would otherwise linger with no run.
    if (identity.runId === null) this.#deps.registry().forgetIdentity(identity.workerId);
  }

  /** Trains the newest pending round of one member, then the next if one came meanwhile. */
  async #drain(workerId: WorkerId, member: SimulatedMember): Promise<void> {
    if (member.busy) return;
    member.busy = true;
    try {
      while (member.pending !== null && this.#members.get(workerId) === member) {
        const { run, message, weights } = member.pending;
        member.pending = null;
        if (run.id !== member.assignment.runId) continue;
        await this.#train(workerId, member, run, message, weights);
        // A turn of the loop between gradients, so the sockets are served.
        await new Promise<void>((resolve) => this.#deps.defer(resolve));
      }
    } catch (error) {
      this.#deps.logError(new Error(`simulated worker ${workerId}: a round failed`, { cause: error }));
    } finally {
      member.busy = false;
    }
  }

  async #train(
    workerId: WorkerId,
    member: SimulatedMember,
    run: Run,
    message: RoundOpen,
    weights: Float32Array,
  ): Promise<void> {
    const { assignment } = member;
    const { config } = assignment;
    member.round ??= createWorkerRound({
      backend: createCpuBackend(run.layout),
      layout: run.layout,
      compression: config,
      batchSize: config.batchSize,
      seed: config.seed,
      worker: assignment.slot,
      train: this.#deps.train!,
      shard: shardIndices(this.#deps.train!.labels, config, assignment.shard),
      now: () => performance.now(),
    });
    const result = await member.round(weights, message.version);
    const submission = parseSubmission({
      runId: run.id,
      workerId,
      version: message.version,
      layers: result.layers,
      loss: result.loss,
      layerStats: result.layerStats,
      computeMs: result.computeMs,
    });
    try {
      run.acceptGradient(workerId, submission);
    } catch (error) {
      if (error instanceof ProtocolFault && RACES.has(error.code)) return;
      throw error;
    }
  }
}
