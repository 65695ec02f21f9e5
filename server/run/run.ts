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
 */
import type { ModelLayout } from '../../core/model/layout';
import {
  asModelVersion,
  type DownlinkLayerVariance,
  type DownlinkMode,
  type GradientReceipt,
  type ModelVersion,
  type RoundMetrics,
  type RoundOpen,
  type RunConfig,
  type RunId,
  type RunStatus,
  type RunSummary,
  type WorkerBackend,
  type WorkerId,
} from '../../core/protocol';
import {
  NO_TRAFFIC,
  addTraffic,
  subtractTraffic,
  type Direction,
  type FrameCategory,
  type WireTraffic,
} from '../../core/traffic/frames';
import { encodeFlat, encodeWeights, packLayers } from '../../core/training/modelCodec';
import {
  aggregateContributions,
  compressUpdate,
  modelHash,
  scaleContribution,
  stepModel,
  type ModelState,
} from '../../core/training/modelUpdate';
import { ProtocolFault } from '../protocol/fault';
import { buildRoundMetrics, isEvaluationRound, lastAccuracy } from './metrics';
import type { ModelRuntime } from '../model/model';
import type { Aggregate } from '../../core/aggregation';
import { attackMultiplier, type WorkerAttack } from '../../core/schema';
import { OpenRound, flatEstimates, type Contribution } from './round';
import { applyConfigPatch } from './runConfig';
import { decodeGradient, type SubmissionEnvelope } from '../protocol/validation';

/** The part of a worker's membership that a checkpoint keeps. */
export interface MemberRecord {
  readonly workerId: WorkerId;
  readonly slot: number;
  bytesUp: number;
  bytesDown: number;
  /** Its socket's frames while in this run (core/traffic); absent in checkpoints written before frames were counted. */
  traffic?: WireTraffic;
  rounds: number;
}

/** How a worker presents itself (kept by its identity; the run copies it for its summaries). */
export interface WorkerProfile {
  readonly name: string;
  readonly backend: WorkerBackend | null;
  /** Simulated by the server (server/run/simulated.ts), started from the dashboard. */
  readonly simulated: boolean;
}

/** A worker's membership of a run: the checkpointed record plus what only lives while the server does. */
export interface Member extends MemberRecord {
  traffic: WireTraffic;
  connected: boolean;
  profile: WorkerProfile;
  /** Server clock of its last join or accepted gradient. */
  lastSeenAt: number | null;
  /** round:open to the arrival of its last accepted gradient, in ms. */
  latencyMs: number | null;
  /** Rounds in a row it was asked to and did not contribute to (not checkpointed). */
  missed: number;
  /** The classroom attack applied to its estimates (set by the teacher; not checkpointed). */
  attack: WorkerAttack | null;
  /**
   * The version whose weights and momentum its replica holds, as far as the
   * server knows (a compressed downlink sends it updates from there), or
   * null: it gets a sync next. Reset on join, rejoin and disconnect.
   */
  replicaVersion: number | null;
}

/**
 * Everything a checkpoint stores; enough to rebuild the run exactly: the
 * summary's own fields (traffic absent in checkpoints written before frames
 * were counted), the weights and momentum, the history and the members.
 */
export interface RunSnapshot
  extends
    Pick<RunSummary, 'runId' | 'config' | 'status' | 'version' | 'bytesUp' | 'bytesDown'>,
    Partial<Pick<RunSummary, 'traffic'>> {
  readonly params: Float32Array;
  readonly velocity: Float32Array;
  readonly history: readonly RoundMetrics[];
  readonly members: readonly MemberRecord[];
}

/** One round:open message and the workers it goes to. */
export interface RoundDelivery {
  readonly workers: readonly WorkerId[];
  readonly message: RoundOpen;
}

/**
 * What takes the model from version `base` to base + 1 under a compressed downlink, as round:open sends it, and its
 * bytes.
 */
interface DownlinkUpdate {
  readonly base: number;
  readonly message: Pick<RoundOpen, 'delivery' | 'layers' | 'relayed' | 'relayedLengths' | 'multipliers'>;
  readonly bytes: number;
}

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

/** Σ of the buffers' byte lengths. */
function byteSum(layers: readonly Uint8Array[]): number {
  return layers.reduce((sum, layer) => sum + layer.byteLength, 0);
}

/** Index of the first non-finite entry, or −1. */
export function firstNonFinite(values: Float32Array): number {
  for (let i = 0; i < values.length; i++) if (!Number.isFinite(values[i]!)) return i;
  return -1;
}

/** The profile of a worker whose identity told the run nothing (yet). */
export function defaultProfile(workerId: WorkerId): WorkerProfile {
  return { name: `worker ${workerId}`, backend: null, simulated: false };
}

/** A run and its round state machine. */
export class Run {
  readonly id: RunId;
  #config: RunConfig;
  #status: RunStatus;
  #version: ModelVersion;
  #params: Float32Array;
  #velocity: Float32Array;
  #history: RoundMetrics[];
  readonly #members = new Map<WorkerId, Member>();
  #bytesUp: number;
  #bytesDown: number;
  #traffic: WireTraffic;
  /** #traffic when the previous round closed. */
  #trafficAtClose: WireTraffic;
  #round: OpenRound | null = null;
  #cancelDeadline: (() => void) | null = null;
  #openScheduled = false;
  #disposed = false;
  /** True while a closed round is combined elsewhere, evaluated or committed; no round opens meanwhile. */
  #evaluating = false;
  /** Bumped by reset and model changes: results of work started before are dropped. */
  #epoch = 0;
  /** The encoded weights (and momentum, and hash) of the current version, built once per version. */
  #encodedModel: { version: number; layers: Uint8Array[]; bytes: number } | null = null;
  #encodedState: { version: number; velocity: Uint8Array } | null = null;
  #stateHash: { version: number; hash: string } | null = null;
  /** The message that took the model to the current version (compressed downlinks only), or null. */
  #lastUpdate: DownlinkUpdate | null = null;
  /** Why the server paused the run itself; cleared by start, resume and reset. */
  #fault: string | null = null;
  /**
   * A run restored running (the server restarted): how many workers its last round had, who are expected back. Its
   * first round opens once a quorum of them has reconnected, or a round deadline after the first one did.
   */
  #awaitingReturn: { readonly expected: number; until: number | null; cancel: (() => void) | null } | null = null;
  readonly #deps: RunDeps;

  constructor(deps: RunDeps, snapshot: RunSnapshot) {
    this.#deps = deps;
    this.id = snapshot.runId;
    this.#config = snapshot.config;
    this.#status = snapshot.status;
    this.#version = snapshot.version;
    this.#params = snapshot.params;
    this.#velocity = snapshot.velocity;
    this.#history = [...snapshot.history];
    this.#bytesUp = snapshot.bytesUp;
    this.#bytesDown = snapshot.bytesDown;
    this.#traffic = snapshot.traffic ?? NO_TRAFFIC;
    this.#trafficAtClose = this.#traffic;
    for (const m of snapshot.members)
      this.#members.set(m.workerId, {
        ...m,
        traffic: m.traffic ?? NO_TRAFFIC,
        connected: false,
        profile: defaultProfile(m.workerId),
        lastSeenAt: null,
        latencyMs: null,
        attack: null,
        missed: 0,
        replicaVersion: null,
      });
    const last = snapshot.history.at(-1);
    if (snapshot.status === 'running' && last !== undefined && last.contributors > 1) {
      this.#awaitingReturn = { expected: last.contributors, until: null, cancel: null };
    }
    const layout = this.layout;
    if (this.#params.length !== layout.parameterCount || this.#velocity.length !== layout.parameterCount) {
      throw new RangeError(
        `run ${this.id}: ${this.#params.length} parameters, ${layout.kind} has ${layout.parameterCount}`,
      );
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
    return this.#config;
  }
  get status(): RunStatus {
    return this.#status;
  }
  get version(): ModelVersion {
    return this.#version;
  }
  /**
   * How the model travels (docs/protocol.md, "Downlink"): the run's setting, in one process and in a cluster alike.
   */
  get #downlink(): DownlinkMode {
    return this.#config.downlink;
  }
  get layout(): ModelLayout {
    return this.#deps.model.layout(this.#config.model);
  }
  /** The current weights (read-only by convention: tests compare them byte for byte). */
  get params(): Float32Array {
    return this.#params;
  }
  get history(): readonly RoundMetrics[] {
    return this.#history;
  }
  get round(): OpenRound | null {
    return this.#round;
  }

  /** The member record of a worker, if it belongs to this run. */
  member(workerId: WorkerId): Member | undefined {
    return this.#members.get(workerId);
  }

  /** The state dashboards show. */
  summary(): RunSummary {
    const round = this.#round;
    return {
      runId: this.id,
      config: this.#config,
      status: this.#status,
      version: this.#version,
      workers: [...this.#members.values()].map((m) => ({
        workerId: m.workerId,
        name: m.profile.name,
        backend: m.profile.backend,
        slot: m.slot,
        connected: m.connected,
        bytesUp: m.bytesUp,
        bytesDown: m.bytesDown,
        traffic: m.traffic,
        rounds: m.rounds,
        lastSeenAt: m.lastSeenAt,
        latencyMs: m.latencyMs,
        attack: m.attack,
        simulated: m.profile.simulated,
      })),
      round:
        round === null
          ? null
          : {
              version: round.version,
              openedAt: round.openedAt,
              deadline: round.deadline,
              participants: [...round.participants],
              received: round.orderedContributors(),
            },
      bytesUp: this.#bytesUp,
      bytesDown: this.#bytesDown,
      traffic: this.#traffic,
      fault: this.#fault,
    };
  }

  /** Why the server paused this run on its own, or null. */
  get fault(): string | null {
    return this.#fault;
  }

  /** A consistent copy of the persistent state, taken at a round boundary. */
  snapshot(): RunSnapshot {
    return {
      runId: this.id,
      config: this.#config,
      status: this.#status,
      version: this.#version,
      params: this.#params.slice(),
      velocity: this.#velocity.slice(),
      // A copy: the store encodes the snapshot later (server/persistence/checkpoint.ts), by when more rounds may have
      // closed.
      history: this.#history.slice(),
      // Named fields, not a rest spread: the profile and timings live only while the server does.
      members: [...this.#members.values()].map(({ workerId, slot, bytesUp, bytesDown, traffic, rounds }) => ({
        workerId,
        slot,
        bytesUp,
        bytesDown,
        traffic,
        rounds,
      })),
      bytesUp: this.#bytesUp,
      bytesDown: this.#bytesDown,
      traffic: this.#traffic,
    };
  }

  // ── Membership ───────────────────────────────────────────────────────────

  /**
   * Adds a worker in the lowest free slot (or returns its existing
   * membership); either way its profile becomes `profile` when given.
   */
  addMember(workerId: WorkerId, profile?: WorkerProfile): Member {
    const existing = this.#members.get(workerId);
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
    const used = new Set([...this.#members.values()].map((m) => m.slot));
    let slot = 0;
    while (used.has(slot)) slot++;
    const member: Member = {
      workerId,
      slot,
      connected: false,
      bytesUp: 0,
      bytesDown: 0,
      traffic: NO_TRAFFIC,
      rounds: 0,
      profile: profile ?? defaultProfile(workerId),
      lastSeenAt: null,
      latencyMs: null,
      attack: null,
      missed: 0,
      replicaVersion: null,
    };
    this.#members.set(workerId, member);
    this.#deps.hooks.changed(this);
    return member;
  }

  /** The teacher marks a member as the classroom's attacker, or makes it honest again (null). */
  setAttack(workerId: WorkerId, attack: WorkerAttack | null): void {
    const member = this.#members.get(workerId);
    if (!member) throw new ProtocolFault('unknown-worker', `worker ${workerId} is not in run ${this.id}`);
    member.attack = attack;
    this.#deps.hooks.changed(this);
  }

  /** Removes a worker (moved or removed by the teacher): it leaves the open round and frees its slot. */
  removeMember(workerId: WorkerId): void {
    if (!this.#members.delete(workerId)) return;
    this.#leaveRound(workerId);
    this.#deps.hooks.changed(this);
  }

  /**
   * A member's socket came or went. Arriving mid-round, it waits for the next
   * round (or opens one if the run was idle); leaving, it is dropped from the
   * open round, never waited for.
   */
  setConnected(workerId: WorkerId, connected: boolean): void {
    const member = this.#members.get(workerId);
    if (!member || member.connected === connected) return;
    member.connected = connected;
    member.replicaVersion = null;
    if (connected) {
      member.lastSeenAt = this.#deps.scheduler.now();
      this.#scheduleOpen();
    } else {
      this.#leaveRound(workerId);
    }
    this.#deps.hooks.changed(this);
  }

  /**
   * The cluster process that held these workers' gradients for the open
   * round is gone (docs/scaling.md): they no longer count, and the workers
   * wait for the next round.
   */
  forgetContributions(workerIds: readonly WorkerId[]): void {
    const round = this.#round;
    if (round === null || workerIds.length === 0) return;
    for (const workerId of workerIds) round.forget(workerId);
    if (round.isAbandoned()) {
      this.#abandonRound();
      this.#scheduleOpen();
    } else if (round.canClose()) {
      this.#closeRound();
    }
    this.#deps.hooks.changed(this);
  }

  /**
   * The worker joined or rejoined: whatever replica it had, it gets a sync at its next round (docs/protocol.md,
   * "Downlink").
   */
  forgetReplica(workerId: WorkerId): void {
    const member = this.#members.get(workerId);
    if (member) member.replicaVersion = null;
  }

  /**
   * model:request: a member's replica failed its hash check. If it is
   * waited for in the open round it is sent a sync of this version now (once
   * per round: a client cannot make the server resend the model at will);
   * otherwise it gets one at its next round.
   */
  requestSync(workerId: WorkerId): void {
    const member = this.#members.get(workerId);
    if (!member) throw new ProtocolFault('unknown-worker', `worker ${workerId} is not in run ${this.id}`);
    member.replicaVersion = null;
    const round = this.#round;
    if (
      round === null ||
      this.#downlink === 'full' ||
      !round.participants.has(workerId) ||
      round.contributions.has(workerId)
    )
      return;
    if (round.resynced.has(workerId)) return;
    round.resynced.add(workerId);
    round.deliveries.resyncs += 1;
    const sync = this.#syncMessage({ runId: this.id, version: round.version, deadline: round.deadline });
    round.bytesDown.set(workerId, (round.bytesDown.get(workerId) ?? 0) + sync.bytes);
    member.replicaVersion = round.version;
    this.#deps.hooks.openRound(this, [{ workers: [workerId], message: sync.message }]);
  }

  // ── Traffic ──────────────────────────────────────────────────────────────

  /** A frame of a member's socket (metered by the socket layer, core/traffic): counted for the member and the run. */
  recordFrame(workerId: WorkerId, direction: Direction, category: FrameCategory, bytes: number): void {
    const member = this.#members.get(workerId);
    if (!member) return;
    const frame: WireTraffic =
      direction === 'up'
        ? { ...NO_TRAFFIC, [category === 'gradient' ? 'gradientUp' : 'controlUp']: bytes }
        : { ...NO_TRAFFIC, [category === 'model' ? 'modelDown' : 'controlDown']: bytes };
    member.traffic = addTraffic(member.traffic, frame);
    this.#traffic = addTraffic(this.#traffic, frame);
  }

  // ── Gradients ────────────────────────────────────────────────────────────

  /**
   * Accepts a member's gradient for the open round, or throws ProtocolFault.
   * Cheap state checks come first, then the decoding; nothing is recorded
   * unless every check passed.
   */
  acceptGradient(workerId: WorkerId, submission: SubmissionEnvelope): GradientReceipt {
    const round = this.#expectContribution(workerId, submission.version);
    const started = this.#deps.scheduler.now();
    const decoded = decodeGradient(submission, this.layout, this.#config);
    const multiplier = attackMultiplier(this.#members.get(workerId)?.attack ?? null);
    scaleContribution(decoded.estimates, multiplier);
    const now = this.#deps.scheduler.now();
    const contribution: Contribution = {
      estimates: decoded.estimates,
      // The relay forwards these bytes next round (packed into one buffer at the close).
      ...(this.#downlink === 'relay' ? { layers: submission.layers } : {}),
      multiplier,
      loss: submission.loss,
      layerStats: submission.layerStats,
      bytesUp: decoded.bytes,
      computeMs: submission.computeMs,
      ...(submission.times === undefined ? {} : { times: submission.times }),
      layerBytes: decoded.layerBytes,
      sentAs: decoded.sentAs,
    };
    this.#record(round, workerId, contribution, now, now - started);
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
    this.#record(this.#expectContribution(workerId, version), workerId, contribution, at, decodeMs);
  }

  /** The open round a gradient of `workerId` for `version` may join, or throws ProtocolFault. */
  #expectContribution(workerId: WorkerId, version: ModelVersion): OpenRound {
    const round = this.#round;
    if (round === null) {
      if (version < this.#version)
        throw new ProtocolFault('stale-version', `version ${version} is over; the model is at ${this.#version}`);
      throw new ProtocolFault('round-closed', `no round is open in run ${this.id} (${this.#status})`);
    }
    if (version < round.version)
      throw new ProtocolFault('stale-version', `version ${version} is over; round ${round.version} is open`);
    if (version > round.version)
      throw new ProtocolFault('future-version', `version ${version} is not open; round ${round.version} is`);
    if (round.contributions.has(workerId))
      throw new ProtocolFault('duplicate', `worker ${workerId} already sent its gradient for version ${version}`);
    if (!round.participants.has(workerId))
      throw new ProtocolFault(
        'not-participant',
        `worker ${workerId} joined after round ${version} opened; it waits for the next`,
      );
    return round;
  }

  /** Counts an accepted gradient in the open round and closes it when it can. */
  #record(round: OpenRound, workerId: WorkerId, contribution: Contribution, now: number, decodeMs: number): void {
    round.decodeMs += decodeMs;
    round.add(workerId, contribution, now);
    const member = this.#members.get(workerId);
    if (member) {
      // Measured on the server's clock alone, so a tab's clock skew cannot distort it.
      member.lastSeenAt = now;
      member.latencyMs = now - round.openedAt;
    }
    if (round.canClose()) this.#closeRound();
    else this.#deps.hooks.changed(this);
  }

  // ── Teacher control ──────────────────────────────────────────────────────

  /** created → running. */
  start(): void {
    this.#expectStatus(['created'], 'start');
    this.#status = 'running';
    this.#fault = null;
    this.#scheduleOpen();
    this.#deps.hooks.changed(this);
  }

  /** running → paused; the open round is abandoned (reopened on resume; late gradients are refused). */
  pause(): void {
    this.#expectStatus(['running'], 'pause');
    this.#abandonRound();
    this.#status = 'paused';
    this.#deps.hooks.changed(this);
  }

  /** paused (or finished, after raising maxRounds) → running. */
  resume(): void {
    this.#expectStatus(['paused', 'finished'], 'resume');
    if (this.#version >= this.#config.maxRounds)
      throw new ProtocolFault(
        'invalid-state',
        `run ${this.id} reached maxRounds (${this.#config.maxRounds}); raise it first`,
      );
    this.#status = 'running';
    this.#fault = null;
    this.#scheduleOpen();
    this.#deps.hooks.changed(this);
  }

  /** Back to version 0: fresh weights from the seed, zero momentum, empty history; status created. */
  reset(): void {
    this.#stopAwaitingReturn();
    this.#abandonRound();
    this.#resetModel();
    this.#status = 'created';
    this.#fault = null;
    this.#deps.hooks.changed(this);
  }

  /**
   * Applies a configuration patch, outside a running round (pause first).
   * Changing the model kind is only allowed at version 0, since the weights
   * change shape; it reinitialises them.
   */
  configure(patch: unknown): void {
    if (this.#status === 'running')
      throw new ProtocolFault('invalid-state', `pause run ${this.id} before configuring it`);
    const next = applyConfigPatch(this.#config, patch);
    const reinitialise = next.model !== this.#config.model || (next.seed !== this.#config.seed && this.#version === 0);
    if (next.model !== this.#config.model && this.#version !== 0) {
      throw new ProtocolFault(
        'invalid-state',
        `run ${this.id} is at version ${this.#version}; reset it before changing the model`,
      );
    }
    this.#config = next;
    // The next update is computed with the new settings: every replica restarts from a sync.
    this.#forgetDownlink();
    if (reinitialise) this.#resetModel();
    if (this.#status === 'finished' && this.#version < next.maxRounds) this.#status = 'paused';
    this.#deps.hooks.changed(this);
  }

  /** Stops every timer; the run is being deleted or the server closes. */
  dispose(): void {
    this.#disposed = true;
    this.#stopAwaitingReturn();
    this.#abandonRound();
  }

  // ── The round machine ────────────────────────────────────────────────────

  #expectStatus(allowed: readonly RunStatus[], action: string): void {
    if (!allowed.includes(this.#status))
      throw new ProtocolFault('invalid-state', `cannot ${action} run ${this.id}: it is ${this.#status}`);
  }

  #resetModel(): void {
    this.#epoch += 1;
    this.#evaluating = false;
    this.#params = this.#deps.model.initialWeights(this.#config.model, this.#config.seed);
    this.#velocity = new Float32Array(this.#params.length);
    this.#version = asModelVersion(0);
    this.#history = [];
    this.#encodedModel = null;
    this.#forgetDownlink();
    this.#bytesUp = 0;
    this.#bytesDown = 0;
    this.#traffic = NO_TRAFFIC;
    this.#trafficAtClose = NO_TRAFFIC;
    for (const m of this.#members.values()) {
      m.bytesUp = 0;
      m.bytesDown = 0;
      m.traffic = NO_TRAFFIC;
      m.rounds = 0;
    }
  }

  #scheduleOpen(): void {
    if (this.#openScheduled || this.#round !== null) return;
    this.#openScheduled = true;
    this.#deps.scheduler.defer(
      this.#guarded('opening a round', () => {
        this.#openScheduled = false;
        this.#openRoundIfReady();
      }),
    );
  }

  #openRoundIfReady(): void {
    if (this.#disposed || this.#evaluating || this.#status !== 'running' || this.#round !== null) return;
    if (this.#version >= this.#config.maxRounds) {
      this.#status = 'finished';
      this.#deps.hooks.changed(this);
      return;
    }
    const participants = [...this.#members.values()].filter((m) => m.connected).map((m) => m.workerId);
    if (participants.length === 0) return; // idle until a worker connects
    if (this.#waitingForReturn(participants.length)) return;
    const { scheduler } = this.#deps;
    // A member that missed dormantAfter rounds in a row is still asked, but no longer waited for.
    const dormant = new Set(participants.filter((id) => this.#members.get(id)!.missed >= this.#config.dormantAfter));
    const openedAt = scheduler.now();
    const deadline = openedAt + this.#config.roundDeadlineMs;
    const deliveries = this.#deliveries(participants, deadline);
    const bytes = new Map<WorkerId, number>();
    for (const d of deliveries) for (const id of d.workers) bytes.set(id, d.bytes);
    const round = new OpenRound(
      this.#version,
      participants,
      bytes,
      openedAt,
      this.#config.roundDeadlineMs,
      this.#config.quorum,
      dormant,
    );
    for (const d of deliveries) round.deliveries[d.kind] += d.workers.length;
    this.#round = round;
    this.#cancelDeadline = scheduler.after(
      this.#config.roundDeadlineMs,
      this.#guarded('the round deadline', () => this.#onDeadline(round)),
    );
    this.#deps.hooks.openRound(
      this,
      deliveries.filter((d) => d.workers.length > 0),
    );
    this.#deps.hooks.changed(this);
  }

  /**
   * After a restart, whether the first round should wait for more of the class to reconnect: until a quorum of the
   * last round's contributors is back, and at most a round deadline after the first of them (docs/protocol.md,
   * "Persistence"). Without it that round would close with the first tab to reconnect as its only contributor.
   */
  #waitingForReturn(connected: number): boolean {
    const wait = this.#awaitingReturn;
    if (wait === null) return false;
    const { scheduler } = this.#deps;
    const { quorum, roundDeadlineMs } = this.#config;
    const needed = Math.min(wait.expected, Math.max(quorum.minimum, Math.ceil(quorum.fraction * wait.expected)));
    const now = scheduler.now();
    wait.until ??= now + roundDeadlineMs;
    if (connected >= needed || now >= wait.until) {
      this.#stopAwaitingReturn();
      return false;
    }
    wait.cancel ??= scheduler.after(
      wait.until - now,
      this.#guarded('waiting for the class to reconnect', () => {
        wait.cancel = null;
        wait.until = 0; // the wait is over, however many came back
        this.#scheduleOpen();
      }),
    );
    return true;
  }

  #stopAwaitingReturn(): void {
    this.#awaitingReturn?.cancel?.();
    this.#awaitingReturn = null;
  }

  /**
   * Who gets which round:open (docs/protocol.md, "Downlink"). `full` runs
   * send every participant the dense model. Under `relay` and `atomo` a
   * member whose replica is at the previous version gets the update that
   * took the model here, the others a sync (weights and momentum); when the
   * update is larger than the dense model (relaying many workers' messages),
   * everyone gets the dense model instead, and their replicas restart later.
   */
  #deliveries(
    participants: readonly WorkerId[],
    deadline: number,
  ): (RoundDelivery & { kind: 'full' | 'sync' | 'update'; bytes: number })[] {
    const base = { runId: this.id, version: this.#version, deadline };
    const model = this.#currentModel();
    const full = {
      kind: 'full' as const,
      bytes: model.bytes,
      message: { ...base, delivery: 'full' as const, layers: model.layers },
    };
    const members = participants.map((id) => this.#members.get(id)!);
    const update = this.#lastUpdate?.base === this.#version - 1 ? this.#lastUpdate : null;
    if (this.#downlink === 'full' || (update !== null && update.bytes > model.bytes)) {
      for (const m of members) m.replicaVersion = null;
      return [{ ...full, workers: participants }];
    }
    const current = (m: Member) =>
      m.replicaVersion === this.#version || (update !== null && m.replicaVersion === this.#version - 1);
    const inStep = members.filter(current).map((m) => m.workerId);
    const behind = members.filter((m) => !current(m)).map((m) => m.workerId);
    for (const m of members) m.replicaVersion = this.#version;
    const sync = this.#syncMessage(base);
    const out: (RoundDelivery & { kind: 'full' | 'sync' | 'update'; bytes: number })[] = [
      { kind: 'sync', workers: behind, ...sync },
    ];
    if (update !== null) {
      const message: RoundOpen = { ...base, ...update.message, hash: this.#currentHash() };
      out.push({ kind: 'update', workers: inStep, message, bytes: update.bytes });
    }
    return out;
  }

  /** The sync message of the current version: dense weights and momentum, and their hash. */
  #syncMessage(base: { readonly runId: RunId; readonly version: ModelVersion; readonly deadline: number }): {
    message: RoundOpen;
    bytes: number;
  } {
    const model = this.#currentModel();
    if (this.#encodedState?.version !== this.#version)
      this.#encodedState = { version: this.#version, velocity: encodeFlat(this.#velocity) };
    const { velocity } = this.#encodedState;
    return {
      message: { ...base, delivery: 'sync', layers: model.layers, velocity, hash: this.#currentHash() },
      bytes: model.bytes + velocity.byteLength,
    };
  }

  /** modelHash of the current weights and momentum, computed once per version. */
  #currentHash(): string {
    if (this.#stateHash?.version !== this.#version) {
      this.#stateHash = { version: this.#version, hash: modelHash({ params: this.#params, velocity: this.#velocity }) };
    }
    return this.#stateHash.hash;
  }

  /** Drops the last update and every member's replica: each gets a sync at its next round. */
  #forgetDownlink(): void {
    this.#lastUpdate = null;
    this.#encodedState = null;
    this.#stateHash = null;
    for (const m of this.#members.values()) m.replicaVersion = null;
  }

  #currentModel(): { layers: Uint8Array[]; bytes: number } {
    if (this.#encodedModel?.version !== this.#version) {
      const layers = encodeWeights(this.layout, this.#params);
      this.#encodedModel = { version: this.#version, layers, bytes: layers.reduce((sum, l) => sum + l.length, 0) };
    }
    return this.#encodedModel;
  }

  #onDeadline(round: OpenRound): void {
    if (this.#round !== round) return;
    this.#cancelDeadline = null;
    round.deadlinePassed = true;
    if (round.canClose()) this.#closeRound();
  }

  #leaveRound(workerId: WorkerId): void {
    const round = this.#round;
    if (round === null) return;
    round.drop(workerId);
    if (round.isAbandoned()) {
      // Everyone asked has gone: open the same version again for whoever is left.
      this.#abandonRound();
      this.#scheduleOpen();
    } else if (round.canClose()) {
      this.#closeRound();
    }
  }

  #abandonRound(): void {
    this.#cancelDeadline?.();
    this.#cancelDeadline = null;
    this.#round = null;
  }

  /**
   * A scheduled step of this run, behind its error boundary: a throw is
   * logged with the run id and pauses this run with the reason; other runs
   * and the process go on.
   */
  #guarded(what: string, fn: () => void): () => void {
    return () => {
      try {
        fn();
      } catch (error) {
        this.#failed(what, error);
      }
    };
  }

  /**
   * Logs a fault of this run, drops the open round and any evaluation in flight, and pauses the run with the reason.
   */
  #failed(what: string, error: unknown): void {
    const reason = `${what} failed: ${error instanceof Error ? error.message : String(error)}`;
    try {
      this.#deps.onError(new Error(`run ${this.id}: ${reason}`, { cause: error }));
      this.#abandonRound();
      this.#epoch += 1;
      this.#evaluating = false;
      if (this.#status === 'running') this.#status = 'paused';
      this.#fault = reason;
      this.#deps.hooks.changed(this);
    } catch (secondary) {
      // Even reporting failed (a hook threw): the run is paused all the same.
      this.#status = this.#status === 'running' ? 'paused' : this.#status;
      this.#fault = reason;
      console.error(`[aggregator] run ${this.id}: reporting a fault failed`, secondary);
    }
  }

  /**
   * Closes the round behind the error boundary: a fault pauses the run, never reaches the caller (a socket handler or a
   * timer).
   */
  #closeRound(): void {
    const round = this.#round!;
    this.#abandonRound();
    try {
      this.#applyRound(round);
    } catch (error) {
      this.#failed(`closing round ${round.version}`, error);
    }
  }

  #applyRound(round: OpenRound): void {
    const updateStarted = this.#deps.scheduler.now();
    const combine = this.#deps.combine;
    if (combine === undefined) {
      const layout = this.layout;
      // The configured rule (robust by default) combines the estimates, as every replica does; each was checked finite
      // when it arrived.
      this.#applyUpdate(
        round,
        aggregateContributions(layout, this.#config.aggregation, flatEstimates(round, layout)),
        updateStarted,
      );
      return;
    }
    // Other processes hold the estimates: no round opens until their partial sums are in.
    this.#awaitThen(combine(this, round), `closing round ${round.version}`, (combined) =>
      this.#applyUpdate(round, combined, updateStarted),
    );
  }

  /**
   * Holds the round machine until `pending` settles, then runs `then` behind
   * the error boundary, unless a reset or dispose came first. A RoundLost
   * reopens the same version.
   */
  #awaitThen<T>(pending: Promise<T>, what: string, then: (value: T) => void): void {
    const epoch = this.#epoch;
    this.#evaluating = true;
    const current = () => !this.#disposed && epoch === this.#epoch;
    pending.then(
      (value) =>
        this.#guarded(what, () => {
          if (!current()) return;
          this.#evaluating = false;
          then(value);
        })(),
      (error: unknown) =>
        this.#guarded(what, () => {
          if (!current()) return;
          this.#evaluating = false;
          if (!(error instanceof RoundLost)) throw error;
          this.#deps.onError(error);
          this.#scheduleOpen();
        })(),
    );
  }

  /**
   * The relay message of a closed round: its contributions' layers in one
   * buffer (socket.io refuses a packet of more than 10 attachments). When
   * some were not kept (received before the run switched to `relay`), the
   * round cannot be relayed: its bytes are infinite, so everyone gets the
   * full model (#deliveries).
   */
  #relayOf(round: OpenRound): DownlinkUpdate {
    const contributions = round.orderedContributors().map((id) => round.contributions.get(id)!);
    if (contributions.some((c) => c.layers === undefined))
      return { base: this.#version, message: { delivery: 'relay', layers: [] }, bytes: Number.POSITIVE_INFINITY };
    const { packed, lengths } = packLayers(contributions.flatMap((c) => c.layers!));
    const multipliers = contributions.map((c) => c.multiplier ?? 1);
    return {
      base: this.#version,
      message: { delivery: 'relay', layers: [], relayed: packed, relayedLengths: lengths, multipliers },
      bytes: packed.byteLength,
    };
  }

  #applyUpdate(round: OpenRound, combined: Aggregate, updateStarted: number): void {
    const { scheduler, model } = this.#deps;
    const config = this.#config;
    const layout = this.layout;
    const state: ModelState = { params: this.#params, velocity: this.#velocity };
    let next: ModelState;
    let lastUpdate: DownlinkUpdate | null = null;
    let downlinkLayers: DownlinkLayerVariance[] = [];
    // The same step, from the same aggregate, moves every worker's replica (core/training/modelUpdate.ts).
    const downlink = this.#downlink;
    if (downlink === 'atomo') {
      // Compress the aggregate, then apply exactly what the workers will decode from those bytes.
      const sent = compressUpdate(layout, combined.value, config.downlinkBudget, config.seed, this.#version);
      next = stepModel(state, sent.estimate, config.learningRate, config.momentum);
      lastUpdate = {
        base: this.#version,
        message: { delivery: 'atomo', layers: sent.layers },
        bytes: byteSum(sent.layers),
      };
      downlinkLayers = sent.stats;
    } else {
      next = stepModel(state, combined.value, config.learningRate, config.momentum);
      if (downlink === 'relay') lastUpdate = this.#relayOf(round);
    }
    this.#params = next.params;
    this.#velocity = next.velocity;
    this.#lastUpdate = lastUpdate;
    this.#version = asModelVersion(this.#version + 1);
    const updateMs = scheduler.now() - updateStarted;

    for (const [workerId, bytes] of round.bytesDown) {
      this.#bytesDown += bytes;
      const member = this.#members.get(workerId);
      if (member) member.bytesDown += bytes;
    }
    for (const workerId of round.participants) {
      const member = this.#members.get(workerId);
      if (member) member.missed = round.contributions.has(workerId) ? 0 : member.missed + 1;
    }
    for (const [workerId, contribution] of round.contributions) {
      this.#bytesUp += contribution.bytesUp;
      const member = this.#members.get(workerId);
      if (member) {
        member.bytesUp += contribution.bytesUp;
        member.rounds += 1;
      }
    }
    if (this.#version >= config.maxRounds) this.#status = 'finished';
    const outcome = {
      runId: this.id,
      closedAt: scheduler.now(),
      layerCount: layout.tensors.length,
      cumulativeBytesUp: this.#bytesUp,
      cumulativeBytesDown: this.#bytesDown,
      traffic: subtractTraffic(this.#traffic, this.#trafficAtClose),
      cumulativeTraffic: this.#traffic,
      updateMs,
      aggregation: { rule: config.aggregation, clipped: combined.clipped, dropped: combined.dropped },
      downlink: {
        mode: downlink,
        ...round.deliveries,
        layers: downlinkLayers,
        ...(downlink === 'full' ? {} : { hash: this.#currentHash() }),
      },
    };
    this.#trafficAtClose = this.#traffic;
    // The history grows with the weights, so any checkpoint taken from here on is consistent.
    const index = this.#history.push(buildRoundMetrics(round, { ...outcome, evaluation: null, evalMs: 0 })) - 1;
    const contributors = round.orderedContributors();
    const publish = (metrics: RoundMetrics) => {
      this.#history[index] = metrics;
      const announce = () => {
        this.#deps.hooks.roundClosed(this, metrics, contributors);
        this.#deps.hooks.changed(this);
        this.#scheduleOpen();
      };
      const committed = this.#deps.hooks.commitRound?.(this);
      if (committed === undefined) announce();
      else this.#awaitThen(committed, `committing round ${metrics.version}`, announce);
    };
    if (!isEvaluationRound(this.#version, config, lastAccuracy(this.#history))) {
      publish(this.#history[index]!);
      return;
    }
    // Evaluation may be asynchronous: no round opens until it is done, and a
    // reset meanwhile (a new epoch) discards its result.
    const epoch = this.#epoch;
    this.#evaluating = true;
    const evalStarted = scheduler.now();
    model
      .evaluate(config.model, this.#params.slice(), config.dataset)
      .then(
        (evaluation) => {
          if (Number.isFinite(evaluation.loss) && Number.isFinite(evaluation.accuracy)) return evaluation;
          this.#deps.onError(
            new Error(
              `run ${this.id}: the evaluation of version ${this.#version} is not finite ` +
                `(loss ${evaluation.loss}); not recorded`,
            ),
          );
          return null;
        },
        (error: unknown) => {
          this.#deps.onError(
            new Error(`run ${this.id}: the evaluation of version ${this.#version} failed`, { cause: error }),
          );
          return null;
        },
      )
      .then((evaluation) =>
        this.#guarded('publishing an evaluated round', () => {
          if (this.#disposed || epoch !== this.#epoch) return;
          this.#evaluating = false;
          publish(buildRoundMetrics(round, { ...outcome, evaluation, evalMs: scheduler.now() - evalStarted }));
        })(),
      );
  }
}
