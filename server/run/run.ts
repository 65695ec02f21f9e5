/**
 * One run: its configuration, model state, members and the synchronous round
 * state machine (docs/design.md, "Server: rounds and validation"):
 *
 *   running, no round, a connected member → open round v to the connected
 *   members → gradients for v accepted from them → close when all remaining
 *   participants reported, or at the deadline once the quorum is in → mean of
 *   the estimates, SGD with momentum → v+1 → next round.
 *
 * No sockets here: the run tells its hooks what to send and when to persist.
 * The Run is what its callers hold; its round machine (machine.ts), members
 * (members.ts), traffic (traffic.ts), downlink (downlink.ts) and the shapes it
 * is read in (snapshot.ts) live beside it.
 */
import type { ModelLayout } from '../../core/model/layout';
import {
  asModelVersion,
  type GradientReceipt,
  type ModelVersion,
  type RoundMetrics,
  type RunConfig,
  type RunId,
  type RunStatus,
  type RunSummary,
  type WorkerId,
} from '../../core/protocol';
import { attackMultiplier, relaysGradients, type WorkerAttack } from '../../core/schema';
import type { Direction, FrameCategory } from '../../core/traffic/frames';
import { ProtocolFault } from '../protocol/fault';
import { decodeGradient, type SubmissionEnvelope } from '../protocol/validation';
import { Downlink } from './downlink';
import { RoundMachine } from './machine';
import { ReturnWait, addNewMember, restoreMembers, type Member, type WorkerProfile } from './members';
import type { Contribution, OpenRound } from './round';
import { applyConfigPatch } from './runConfig';
import type { RunDeps } from './runDeps';
import { snapshotOf, summarize, type RunCore, type RunSnapshot } from './snapshot';
import { RunTraffic } from './traffic';

export type { RoundDelivery } from './downlink';
export type { WorkerProfile } from './members';
export { RoundLost, type RunDeps, type RunHooks, type Scheduler } from './runDeps';
export type { RunSnapshot } from './snapshot';

/** A run and its round state machine. */
export class Run {
  readonly id: RunId;
  readonly #core: RunCore;
  readonly #rounds: RoundMachine;
  readonly #deps: RunDeps;

  constructor(deps: RunDeps, snapshot: RunSnapshot) {
    this.#deps = deps;
    this.id = snapshot.runId;
    this.#core = {
      runId: snapshot.runId,
      config: snapshot.config,
      status: snapshot.status,
      version: snapshot.version,
      params: snapshot.params,
      velocity: snapshot.velocity,
      history: [...snapshot.history],
      members: restoreMembers(snapshot.members),
      traffic: new RunTraffic(snapshot),
      downlink: new Downlink(),
      round: null,
      fault: null,
    };
    const last = snapshot.history.at(-1);
    const returning =
      snapshot.status === 'running' && last !== undefined && last.contributors > 1
        ? new ReturnWait(last.contributors)
        : null;
    this.#rounds = new RoundMachine(this, this.#core, deps, returning);
    const layout = this.layout;
    const { params, velocity } = this.#core;
    if (params.length !== layout.parameterCount || velocity.length !== layout.parameterCount) {
      throw new RangeError(`run ${this.id}: ${params.length} parameters, ${layout.kind} has ${layout.parameterCount}`);
    }
  }

  /** A fresh run at version 0 with the model initialised from the seed. */
  static create(deps: RunDeps, runId: RunId, config: RunConfig, status: RunStatus): Run {
    const params = deps.model.initialWeights(config.model, config.seed);
    return new Run(deps, {
      runId,
      config,
      status,
      version: asModelVersion(0),
      params,
      velocity: new Float32Array(params.length),
      history: [],
      members: [],
      bytesUp: 0,
      bytesDown: 0,
    });
  }

  get config(): RunConfig {
    return this.#core.config;
  }
  get status(): RunStatus {
    return this.#core.status;
  }
  get version(): ModelVersion {
    return this.#core.version;
  }
  get layout(): ModelLayout {
    return this.#rounds.layout;
  }
  /** The current weights (read-only by convention: tests compare them byte for byte). */
  get params(): Float32Array {
    return this.#core.params;
  }
  get history(): readonly RoundMetrics[] {
    return this.#core.history;
  }
  get round(): OpenRound | null {
    return this.#core.round;
  }

  /** The member record of a worker, if it belongs to this run. */
  member(workerId: WorkerId): Member | undefined {
    return this.#core.members.get(workerId);
  }

  /** The state dashboards show. */
  summary(): RunSummary {
    return summarize(this.#core);
  }

  /** Why the server paused this run on its own, or null. */
  get fault(): string | null {
    return this.#core.fault;
  }

  /** A consistent copy of the persistent state, taken at a round boundary. */
  snapshot(): RunSnapshot {
    return snapshotOf(this.#core);
  }

  // ── Membership ───────────────────────────────────────────────────────────

  /**
   * Adds a worker in the lowest free slot (or returns its existing
   * membership); either way its profile becomes `profile` when given.
   */
  addMember(workerId: WorkerId, profile?: WorkerProfile): Member {
    const existing = this.#core.members.get(workerId);
    if (existing) {
      if (
        profile !== undefined &&
        (profile.name !== existing.profile.name || profile.backend !== existing.profile.backend)
      ) {
        existing.profile = profile;
        this.#deps.hooks.changed(this);
      }
      return existing;
    }
    const member = addNewMember(this.#core.members, workerId, profile);
    this.#deps.hooks.changed(this);
    return member;
  }

  /** The teacher marks a member as the classroom's attacker, or makes it honest again (null). */
  setAttack(workerId: WorkerId, attack: WorkerAttack | null): void {
    const member = this.#core.members.get(workerId);
    if (!member) throw new ProtocolFault('unknown-worker', `worker ${workerId} is not in run ${this.id}`);
    member.attack = attack;
    this.#deps.hooks.changed(this);
  }

  /** Removes a worker (moved or removed by the teacher): it leaves the open round and frees its slot. */
  removeMember(workerId: WorkerId): void {
    if (!this.#core.members.delete(workerId)) return;
    this.#rounds.leave(workerId);
    this.#deps.hooks.changed(this);
  }

  /**
   * A member's socket came or went. Arriving mid-round, it waits for the next
   * round (or opens one if the run was idle); leaving, it is dropped from the
   * open round, never waited for.
   */
  setConnected(workerId: WorkerId, connected: boolean): void {
    const member = this.#core.members.get(workerId);
    if (!member || member.connected === connected) return;
    member.connected = connected;
    member.replicaVersion = null;
    if (connected) {
      member.lastSeenAt = this.#deps.scheduler.now();
      this.#rounds.scheduleOpen();
    } else {
      this.#rounds.leave(workerId);
    }
    this.#deps.hooks.changed(this);
  }

  /**
   * The cluster process that held these workers' gradients for the open
   * round is gone (docs/scaling.md): they no longer count, and the workers
   * wait for the next round.
   */
  forgetContributions(workerIds: readonly WorkerId[]): void {
    const round = this.#core.round;
    if (round === null || workerIds.length === 0) return;
    for (const workerId of workerIds) round.forget(workerId);
    this.#rounds.settle(round);
    this.#deps.hooks.changed(this);
  }

  /**
   * The worker joined or rejoined: whatever replica it had, it gets a sync at its next round (docs/protocol.md,
   * "Downlink").
   */
  forgetReplica(workerId: WorkerId): void {
    const member = this.#core.members.get(workerId);
    if (member) member.replicaVersion = null;
  }

  /**
   * model:request: a member's replica failed its hash check. If it is
   * waited for in the open round it is sent a sync of this version now (once
   * per round: a client cannot make the server resend the model at will);
   * otherwise it gets one at its next round.
   */
  requestSync(workerId: WorkerId): void {
    const member = this.#core.members.get(workerId);
    if (!member) throw new ProtocolFault('unknown-worker', `worker ${workerId} is not in run ${this.id}`);
    member.replicaVersion = null;
    const round = this.#core.round;
    if (
      round === null ||
      this.#core.config.downlink === 'full' ||
      !round.participants.has(workerId) ||
      round.contributions.has(workerId)
    )
      return;
    if (round.resynced.has(workerId)) return;
    round.resynced.add(workerId);
    round.deliveries.resyncs += 1;
    const base = { runId: this.id, version: round.version, deadline: round.deadline };
    const sync = this.#core.downlink.sync(this.#rounds.model(), base);
    round.bytesDown.set(workerId, (round.bytesDown.get(workerId) ?? 0) + sync.bytes);
    member.replicaVersion = round.version;
    this.#deps.hooks.openRound(this, [{ workers: [workerId], message: sync.message }]);
  }

  /** A frame of a member's socket (metered by the socket layer, core/traffic): counted for the member and the run. */
  recordFrame(workerId: WorkerId, direction: Direction, category: FrameCategory, bytes: number): void {
    const member = this.#core.members.get(workerId);
    if (member) this.#core.traffic.recordFrame(member, direction, category, bytes);
  }

  // ── Gradients ────────────────────────────────────────────────────────────

  /**
   * Accepts a member's gradient for the open round, or throws ProtocolFault.
   * Cheap state checks come first, then the decoding; nothing is recorded
   * unless every check passed.
   */
  acceptGradient(workerId: WorkerId, submission: SubmissionEnvelope): GradientReceipt {
    const round = this.#rounds.expectContribution(workerId, submission.version);
    const started = this.#deps.scheduler.now();
    const multiplier = attackMultiplier(this.#core.members.get(workerId)?.attack ?? null);
    const decoded = decodeGradient(submission, this.layout, this.#core.config, multiplier);
    const now = this.#deps.scheduler.now();
    const contribution: Contribution = {
      estimate: decoded.estimate,
      // The relay forwards these bytes next round (packed into one buffer at the close).
      ...(relaysGradients(this.#core.config.downlink) ? { layers: submission.layers } : {}),
      multiplier,
      loss: submission.loss,
      layerStats: submission.layerStats,
      bytesUp: decoded.bytes,
      computeMs: submission.computeMs,
      ...(submission.times === undefined ? {} : { times: submission.times }),
      layerBytes: decoded.layerBytes,
      sentAs: decoded.sentAs,
    };
    this.#rounds.record(round, workerId, contribution, now, now - started);
    return { version: submission.version, bytes: decoded.bytes };
  }

  /**
   * A gradient another process of a cluster checked, decoded and keeps
   * (docs/scaling.md): the same state checks, then it counts like one
   * received here; `at` is when that process accepted it.
   */
  acceptRemote(
    workerId: WorkerId,
    version: ModelVersion,
    contribution: Contribution,
    at: number,
    decodeMs: number,
  ): void {
    this.#rounds.record(this.#rounds.expectContribution(workerId, version), workerId, contribution, at, decodeMs);
  }

  // ── Teacher control ──────────────────────────────────────────────────────

  /** created → running. */
  start(): void {
    this.#expectStatus(['created'], 'start');
    this.#core.status = 'running';
    this.#core.fault = null;
    this.#rounds.scheduleOpen();
    this.#deps.hooks.changed(this);
  }

  /** running → paused; the open round is abandoned (reopened on resume; late gradients are refused). */
  pause(): void {
    this.#expectStatus(['running'], 'pause');
    this.#rounds.abandon();
    this.#core.status = 'paused';
    this.#deps.hooks.changed(this);
  }

  /** paused (or finished, after raising maxRounds) → running. */
  resume(): void {
    this.#expectStatus(['paused', 'finished'], 'resume');
    if (this.#core.version >= this.#core.config.maxRounds)
      throw new ProtocolFault(
        'invalid-state',
        `run ${this.id} reached maxRounds (${this.#core.config.maxRounds}); raise it first`,
      );
    this.#core.status = 'running';
    this.#core.fault = null;
    this.#rounds.scheduleOpen();
    this.#deps.hooks.changed(this);
  }

  /** Back to version 0: fresh weights from the seed, zero momentum, empty history; status created. */
  reset(): void {
    this.#rounds.stopAwaitingReturn();
    this.#rounds.abandon();
    this.#rounds.resetModel();
    this.#core.status = 'created';
    this.#core.fault = null;
    this.#deps.hooks.changed(this);
  }

  /**
   * Applies a configuration patch, outside a running round (pause first).
   * Changing the model kind is only allowed at version 0, since the weights
   * change shape; it reinitialises them.
   */
  configure(patch: unknown): void {
    if (this.#core.status === 'running')
      throw new ProtocolFault('invalid-state', `pause run ${this.id} before configuring it`);
    const next = applyConfigPatch(this.#core.config, patch);
    const reinitialise =
      next.model !== this.#core.config.model || (next.seed !== this.#core.config.seed && this.#core.version === 0);
    if (next.model !== this.#core.config.model && this.#core.version !== 0) {
      throw new ProtocolFault(
        'invalid-state',
        `run ${this.id} is at version ${this.#core.version}; reset it before changing the model`,
      );
    }
    this.#core.config = next;
    // The next update is computed with the new settings: every replica restarts from a sync.
    this.#core.downlink.forget(this.#core.members);
    if (reinitialise) this.#rounds.resetModel();
    if (this.#core.status === 'finished' && this.#core.version < next.maxRounds) this.#core.status = 'paused';
    this.#deps.hooks.changed(this);
  }

  /** Stops every timer; the run is being deleted or the server closes. */
  dispose(): void {
    this.#rounds.dispose();
  }

  #expectStatus(allowed: readonly RunStatus[], action: string): void {
    if (!allowed.includes(this.#core.status))
      throw new ProtocolFault('invalid-state', `cannot ${action} run ${this.id}: it is ${this.#core.status}`);
  }
}
