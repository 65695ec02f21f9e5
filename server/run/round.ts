/**
 * One synchronous round (docs/design.md, "The round"): who was asked, what came back, and
 * when it may close. Pure bookkeeping: no sockets, no timers.
 */
import type {
  DownlinkChoice,
  LayerSentAs,
  LayerStats,
  ModelVersion,
  QuorumRule,
  RunId,
  RunStatus,
  WorkerId,
  WorkerTimes,
} from '../../core/protocol';
import type { RoundEstimate } from '../../core/training/roundEstimate';
import { ProtocolFault } from '../protocol/fault';

/** One accepted gradient: the decoded unbiased estimate of each layer plus what the worker reported. */
export interface Contribution {
  /**
   * The decoded estimate, times the multiplier; null when another process of a cluster holds it (docs/scaling.md,
   * "Hierarchical aggregation").
   */
  readonly estimate: RoundEstimate | null;
  /** The encoded layers as received, kept only under the downlinks that forward them (`relay`, `auto`). */
  readonly layers?: readonly Uint8Array[];
  /** What the estimates were multiplied by (the classroom attack); absent: 1. */
  readonly multiplier?: number;
  readonly loss: number;
  readonly layerStats: readonly LayerStats[];
  readonly bytesUp: number;
  readonly computeMs: number;
  /** The worker's split of computeMs and its clock, when it sent one. */
  readonly times?: WorkerTimes;
  /**
   * Each layer's bytes as received, and how it was sent (server/protocol/validation.ts decodeGradient); absent in tests
   * that build contributions by hand.
   */
  readonly layerBytes?: readonly number[];
  readonly sentAs?: readonly (LayerSentAs | null)[];
}

/** The state of the round that trains model `version`. */
export class OpenRound {
  readonly version: ModelVersion;
  readonly openedAt: number;
  readonly deadline: number;
  /** Workers sent round:open; a worker that leaves is removed unless it already contributed. */
  readonly participants: Set<WorkerId>;
  readonly contributions = new Map<WorkerId, Contribution>();
  /** Model bytes sent to each participant (when the round opened, and any sync since). */
  readonly bytesDown: Map<WorkerId, number>;
  /** How round:open brought the model to the participants (docs/protocol.md, "Downlink"), and the resyncs asked for. */
  readonly deliveries = { full: 0, sync: 0, update: 0, resyncs: 0 };
  /** What the `auto` downlink weighed when the round opened; null under the other modes. */
  downlinkChoice: DownlinkChoice | null = null;
  /** Participants sent a sync this round after a failed hash check (at most one each). */
  readonly resynced = new Set<WorkerId>();
  readonly #quorum: number;
  /**
   * Participants that missed `dormantAfter` rounds in a row: asked, but neither waited for nor counted in the quorum.
   */
  readonly dormant: ReadonlySet<WorkerId>;
  deadlinePassed = false;
  lastAcceptedAt: number;
  decodeMs = 0;
  /** What opening the round cost (RoundDurations.downlinkMs and emitMs), set by the round machine. */
  openMs = { downlinkMs: 0, emitMs: 0 };

  constructor(
    version: ModelVersion,
    participants: readonly WorkerId[],
    modelBytes: number | ReadonlyMap<WorkerId, number>,
    openedAt: number,
    deadlineMs: number,
    quorum: QuorumRule,
    dormant: ReadonlySet<WorkerId> = new Set(),
  ) {
    this.version = version;
    this.openedAt = openedAt;
    this.lastAcceptedAt = openedAt;
    this.deadline = openedAt + deadlineMs;
    this.participants = new Set(participants);
    this.bytesDown = new Map(
      participants.map((id) => [id, typeof modelBytes === 'number' ? modelBytes : (modelBytes.get(id) ?? 0)]),
    );
    this.dormant = dormant;
    const counted = participants.filter((id) => !dormant.has(id)).length;
    this.#quorum = Math.max(quorum.minimum, Math.ceil(quorum.fraction * counted));
  }

  /** Records an accepted gradient (the caller has checked participation and duplicates). */
  add(worker: WorkerId, contribution: Contribution, at: number): void {
    this.contributions.set(worker, contribution);
    this.lastAcceptedAt = at;
  }

  /** Drops a worker that left; its gradient, if already in, still counts. */
  drop(worker: WorkerId): void {
    if (!this.contributions.has(worker)) this.participants.delete(worker);
  }

  /**
   * Whether the round can close now: every remaining participant reported,
   * or the deadline passed with the quorum in (the quorum shrinks with the
   * participants that left, so a departure never stalls a round).
   */
  canClose(): boolean {
    const received = this.contributions.size;
    if (received === 0) return false;
    let waiting = false;
    for (const id of this.participants) if (!this.contributions.has(id) && !this.dormant.has(id)) waiting = true;
    if (!waiting) return true;
    return this.deadlinePassed && received >= Math.min(this.#quorum, this.participants.size);
  }

  /** Forgets a worker and its gradient: the cluster process that held the gradient is gone. */
  forget(worker: WorkerId): void {
    this.contributions.delete(worker);
    this.participants.delete(worker);
  }

  /** Whether everyone who was asked has left without contributing: the round can only be reopened. */
  isAbandoned(): boolean {
    return this.participants.size === 0;
  }

  /** Contributors in ascending worker id: the fixed summation order that makes the update deterministic. */
  orderedContributors(): WorkerId[] {
    return [...this.contributions.keys()].sort((a, b) => a - b);
  }
}

/** The contributors' decoded estimates in ascending worker id (the fixed order that makes the update deterministic). */
export function roundEstimates(round: OpenRound): RoundEstimate[] {
  return round.orderedContributors().map((worker) => {
    const estimate = round.contributions.get(worker)!.estimate;
    if (estimate === null) throw new Error(`bug: the estimate of worker ${worker} is held by another process`);
    return estimate;
  });
}

/**
 * The open round a gradient of `workerId` for `version` may join, or throws ProtocolFault; `run` says where the
 * run's model is when no round is open.
 */
export function expectContribution(
  round: OpenRound | null,
  run: { readonly runId: RunId; readonly status: RunStatus; readonly version: ModelVersion },
  workerId: WorkerId,
  version: ModelVersion,
): OpenRound {
  if (round === null) {
    if (version < run.version)
      throw new ProtocolFault('stale-version', `version ${version} is over; the model is at ${run.version}`);
    throw new ProtocolFault('round-closed', `no round is open in run ${run.runId} (${run.status})`);
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
