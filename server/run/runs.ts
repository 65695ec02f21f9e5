/**
 * The runs of a server and the workers' membership of them: create, find,
 * delete, restore from checkpoints; join, rejoin, move, remove, disconnect.
 * Each change is persisted (coalesced, atomic) so a restart finds it.
 */
import { randomBytes } from 'node:crypto';
import {
  PROTOCOL_VERSION,
  asRunId,
  type JoinAccepted,
  type JoinRequest,
  type RunId,
  type RunStatus,
  type WorkerAssignment,
  type WorkerId,
} from '../../core/protocol';
import type { Direction, FrameCategory } from '../../core/traffic/frames';
import { shardOfSlot } from '../../core/training/shard';
import type { WorkerAttack } from '../../core/schema';
import type { CheckpointStore, StoredRun } from '../persistence/checkpoint';
import { ProtocolFault } from '../protocol/fault';
import { Run, type RunDeps, type WorkerProfile } from './run';
import { DEFAULT_RUN_CONFIG } from '../../core/schema';
import { applyConfigPatch } from './runConfig';
import type { WorkerIdentity, WorkerRegistry } from './workers';

/** How the registry reaches a worker's socket (implemented over socket.io by the socket layer). */
export interface WorkerNotifier {
  assigned(identity: WorkerIdentity, assignment: WorkerAssignment): void;
  removed(identity: WorkerIdentity, reason: string): void;
}

/** How a worker presents itself in its run's summaries. */
function profileOf(identity: WorkerIdentity): WorkerProfile {
  return { name: identity.name, backend: identity.backend, simulated: identity.simulated };
}

/** The dependencies of the registry. */
export interface RunRegistryDeps {
  readonly runDeps: RunDeps;
  readonly workers: WorkerRegistry;
  /** Where runs and identities are written: the data directory, or a cluster's Redis (docs/scaling.md). */
  readonly store: Pick<CheckpointStore, 'saveRun' | 'saveWorkers' | 'deleteRun'>;
  readonly notifier: WorkerNotifier;
  readonly maxMessageBytes: number;
  readonly now: () => number;
}

/** All runs, in creation order. */
export class RunRegistry {
  readonly #runs = new Map<RunId, { run: Run; createdAt: number }>();
  readonly #deps: RunRegistryDeps;

  constructor(deps: RunRegistryDeps) {
    this.#deps = deps;
  }

  // ── Runs ─────────────────────────────────────────────────────────────────

  /** Creates a run from a configuration patch over the defaults. */
  create(patch: unknown, status: RunStatus = 'created', runId: RunId = asRunId(randomBytes(4).toString('hex'))): Run {
    const config = applyConfigPatch(DEFAULT_RUN_CONFIG, patch);
    if (this.#runs.has(runId)) throw new ProtocolFault('invalid-config', `run ${runId} exists`);
    const run = Run.create(this.#deps.runDeps, runId, config, status);
    this.#runs.set(runId, { run, createdAt: this.#deps.now() });
    this.persist(run);
    // Dashboards learn of a run created without starting too, not only at its first change.
    this.#deps.runDeps.hooks.changed(run);
    return run;
  }

  /** The run with this id; throws ProtocolFault 'unknown-run'. */
  get(runId: RunId): Run {
    const entry = this.#runs.get(runId);
    if (!entry) throw new ProtocolFault('unknown-run', `no run ${runId}`);
    return entry.run;
  }

  /** Runs in creation order. */
  list(): Run[] {
    return [...this.#runs.values()].map((entry) => entry.run);
  }

  get size(): number {
    return this.#runs.size;
  }

  /**
   * Deletes a run. Its workers move to the oldest remaining run; with none
   * left they are told so and keep their identity (they may join later).
   */
  delete(runId: RunId): void {
    const run = this.get(runId);
    run.dispose();
    this.#runs.delete(runId);
    this.#deps.store.deleteRun(runId);
    const fallback = this.list()[0];
    for (const identity of this.#deps.workers.all()) {
      if (identity.runId !== runId) continue;
      if (fallback) {
        this.#assign(identity, fallback);
      } else {
        identity.runId = null;
        this.#deps.notifier.removed(identity, `run ${runId} was deleted and no run is left`);
      }
    }
    this.#persistWorkers();
  }

  /** Writes a run's checkpoint (its state is always at a round boundary: weights change only when a round closes). */
  persist(run: Run): void {
    const entry = this.#runs.get(run.id);
    if (entry) this.#deps.store.saveRun({ snapshot: run.snapshot(), createdAt: entry.createdAt });
  }

  /** Rebuilds runs and identities from checkpoints, before any socket connects. */
  restore(runs: readonly StoredRun[], workers: Parameters<WorkerRegistry['restore']>[0] | null): void {
    for (const stored of runs) {
      const run = new Run(this.#deps.runDeps, stored.snapshot);
      this.#runs.set(run.id, { run, createdAt: stored.createdAt });
    }
    if (workers) this.#deps.workers.restore(workers, (runId) => this.#runs.has(asRunId(runId)));
    // Identities are the truth about membership: a run lists exactly the workers that point at it.
    const listed = new Set<string>();
    for (const identity of this.#deps.workers.all()) {
      if (identity.runId === null) continue;
      this.get(identity.runId).addMember(identity.workerId, profileOf(identity));
      listed.add(`${identity.runId}/${identity.workerId}`);
    }
    for (const run of this.list()) {
      for (const member of run.summary().workers) {
        if (!listed.has(`${run.id}/${member.workerId}`)) run.removeMember(member.workerId);
      }
    }
  }

  // ── Workers ──────────────────────────────────────────────────────────────

  /**
   * worker:join. A key rejoins its identity (same id, run and slot; a
   * different runId moves it); no key creates one, from `address`, within
   * the identity limits (expired identities are forgotten first). The socket
   * takes the identity over from any older socket.
   */
  join(request: JoinRequest, socketId: string, address: string): { identity: WorkerIdentity; accepted: JoinAccepted } {
    if (request.protocol !== PROTOCOL_VERSION) {
      throw new ProtocolFault('bad-protocol', `client speaks protocol ${request.protocol}, server ${PROTOCOL_VERSION}`);
    }
    const target = request.runId === undefined ? undefined : this.get(request.runId);
    let identity: WorkerIdentity;
    let key = request.workerKey;
    if (key !== undefined) {
      const found = this.#deps.workers.findByKey(key);
      if (!found)
        throw new ProtocolFault('unknown-worker', 'unknown worker key: join without one to get a new identity');
      identity = found;
    } else {
      this.expireIdentities();
      const created = this.#deps.workers.create(request.name, address);
      identity = created.identity;
      key = created.key;
    }
    if (request.name !== undefined) identity.name = request.name;
    if (request.backend !== undefined) identity.backend = request.backend;
    const run = target ?? (identity.runId !== null ? this.get(identity.runId) : this.list()[0]);
    if (!run) throw new ProtocolFault('unknown-run', 'the server has no run to join');
    this.#enter(identity, run, socketId);
    return { identity, accepted: { ...this.assignment(identity, run), workerKey: key } };
  }

  /**
   * A worker the server simulates (server/run/simulated.ts) joins `runId` on a
   * pseudo socket id: an identity of its own (no key leaves the server,
   * never checkpointed), a slot, a shard, connected at once.
   */
  joinSimulated(
    runId: RunId,
    socketId: string,
    profile: Pick<WorkerIdentity, 'name' | 'backend'>,
  ): { identity: WorkerIdentity; assignment: WorkerAssignment } {
    const run = this.get(runId);
    const { identity } = this.#deps.workers.create(profile.name, 'server', true);
    identity.backend = profile.backend;
    this.#enter(identity, run, socketId);
    return { identity, assignment: this.assignment(identity, run) };
  }

  /** Forgets an identity that is in no run (a simulated worker whose run was deleted with none left). */
  forgetIdentity(workerId: WorkerId): void {
    const identity = this.#deps.workers.get(workerId);
    if (identity?.runId !== null) return;
    this.#deps.workers.remove(workerId);
    this.#persistWorkers();
  }

  /** The identity takes `socketId` and becomes a connected member of `run` (leaving its old run). */
  #enter(identity: WorkerIdentity, run: Run, socketId: string): void {
    if (identity.runId !== null && identity.runId !== run.id) this.get(identity.runId).removeMember(identity.workerId);
    identity.runId = run.id;
    identity.socketId = socketId;
    this.#deps.workers.touch(identity);
    run.addMember(identity.workerId, profileOf(identity));
    run.setConnected(identity.workerId, true);
    // A join or rejoin always restarts the worker's replica from a sync (docs/protocol.md, "Downlink").
    run.forgetReplica(identity.workerId);
    this.#persistWorkers();
    this.persist(run);
  }

  /** The socket of a worker went away (or the worker left): it is dropped from the open round. */
  disconnect(workerId: WorkerId, socketId: string): void {
    const identity = this.#deps.workers.get(workerId);
    if (!identity || identity.socketId !== socketId) return; // a newer socket owns it now
    identity.socketId = null;
    this.#deps.workers.touch(identity);
    if (identity.runId !== null) this.#runs.get(identity.runId)?.run.setConnected(workerId, false);
  }

  /** A frame of a worker's socket, counted in its current run. */
  recordFrame(workerId: WorkerId, direction: Direction, category: FrameCategory, bytes: number): void {
    const runId = this.#deps.workers.get(workerId)?.runId;
    if (runId !== undefined && runId !== null)
      this.#runs.get(runId)?.run.recordFrame(workerId, direction, category, bytes);
  }

  /** A recovered socket (connection state recovery) is the worker's again. */
  reconnect(workerId: WorkerId, socketId: string): void {
    const identity = this.#deps.workers.get(workerId);
    if (!identity || identity.runId === null) return;
    identity.socketId = socketId;
    this.#deps.workers.touch(identity);
    this.#runs.get(identity.runId)?.run.setConnected(workerId, true);
  }

  /** worker:move: the worker leaves its run (and round) and waits for the next round of `runId`. */
  move(workerId: WorkerId, runId: RunId): void {
    const identity = this.#identity(workerId);
    const target = this.get(runId);
    if (identity.runId === runId) return;
    if (identity.runId !== null) this.#runs.get(identity.runId)?.run.removeMember(workerId);
    this.#assign(identity, target);
    this.#persistWorkers();
  }

  /** worker:attack: the classroom attacker toggle, on the worker's current run. */
  setAttack(workerId: WorkerId, attack: WorkerAttack | null): void {
    const identity = this.#identity(workerId);
    if (identity.runId === null) throw new ProtocolFault('invalid-state', `worker ${workerId} is in no run`);
    this.get(identity.runId).setAttack(workerId, attack);
  }

  /**
   * Forgets every identity unused (no socket) for longer than the idle
   * expiry: it leaves its run and its key joins no more. Returns how many.
   */
  expireIdentities(): number {
    const expired = this.#deps.workers.expired();
    for (const identity of expired) {
      if (identity.runId !== null) this.#runs.get(identity.runId)?.run.removeMember(identity.workerId);
      this.#deps.workers.remove(identity.workerId);
    }
    if (expired.length > 0) this.#persistWorkers();
    return expired.length;
  }

  /** worker:remove: the identity is forgotten and its socket told. */
  remove(workerId: WorkerId): void {
    const identity = this.#identity(workerId);
    if (identity.runId !== null) this.#runs.get(identity.runId)?.run.removeMember(workerId);
    this.#deps.workers.remove(workerId);
    this.#deps.notifier.removed(identity, 'removed by the teacher');
    this.#persistWorkers();
  }

  /** What a worker needs to train in `run`. */
  assignment(identity: WorkerIdentity, run: Run): WorkerAssignment {
    const member = run.member(identity.workerId);
    if (!member) throw new Error(`bug: worker ${identity.workerId} is not a member of run ${run.id}`);
    return {
      workerId: identity.workerId,
      runId: run.id,
      config: run.config,
      slot: member.slot,
      shard: shardOfSlot(member.slot, run.config.shards),
      maxMessageBytes: this.#deps.maxMessageBytes,
    };
  }

  /** Tells every member of `run` its (changed) assignment, e.g. after a configure. */
  reassignMembers(run: Run): void {
    for (const identity of this.#deps.workers.all()) {
      if (identity.runId === run.id) this.#deps.notifier.assigned(identity, this.assignment(identity, run));
    }
  }

  /** Writes every run and the identities (on close). */
  persistAll(): void {
    for (const run of this.list()) this.persist(run);
    this.#persistWorkers();
  }

  #identity(workerId: WorkerId): WorkerIdentity {
    const identity = this.#deps.workers.get(workerId);
    if (!identity) throw new ProtocolFault('unknown-worker', `no worker ${workerId}`);
    return identity;
  }

  #assign(identity: WorkerIdentity, run: Run): void {
    identity.runId = run.id;
    run.addMember(identity.workerId, profileOf(identity));
    this.#deps.notifier.assigned(identity, this.assignment(identity, run));
    if (identity.socketId !== null) run.setConnected(identity.workerId, true);
    this.persist(run);
  }

  #persistWorkers(): void {
    this.#deps.store.saveWorkers(this.#deps.workers.snapshot());
  }
}
