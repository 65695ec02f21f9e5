/**
 * The gradients of this process's own workers (docs/scaling.md,
 * "Hierarchical aggregation"): each process checks and decodes what its
 * sockets send for the open round, keeps the estimates, and tells the leader
 * only their statistics (norm, per-tensor maxima) and what the metrics need.
 * When the leader seals the round this process stops accepting it; when the
 * leader's plan comes, it sends one partial sum (binary, float64 integers of
 * core/aggregation/exactSum.ts), or for the coordinate-wise rules the
 * estimates themselves.
 */
import type { ModelLayout } from '../../core/model/layout';
import type { GradientReceipt, ModelVersion, RoundOpen, RunConfig, RunId, WorkerId } from '../../core/protocol';
import { attackMultiplier, relaysGradients, type WorkerAttack } from '../../core/schema';
import type { RoundEstimate } from '../../core/training/roundEstimate';
import { ProtocolFault } from '../protocol/fault';
import { decodeGradient, type SubmissionEnvelope } from '../protocol/validation';
import {
  toBuffer,
  unpackDeliveries,
  type ContribHeader,
  type DeliveryHeader,
  type OpenHeader,
  type PartialHeader,
  type PlanHeader,
  type ResyncHeader,
  type SealedHeader,
  type ToLeaderHeader,
} from './messages';

/** What the ingest needs from its process. */
export interface IngestDeps {
  readonly self: string;
  readonly layout: (config: RunConfig) => ModelLayout;
  readonly now: () => number;
  /** Sends to the current leader (directly when this process leads). */
  readonly toLeader: (header: ToLeaderHeader, blobs?: readonly Buffer[]) => void;
  /** Emits round:open to sockets of this process. */
  readonly emitOpen: (socketIds: readonly string[], round: RoundOpen) => void;
}

interface Held {
  readonly estimate: RoundEstimate;
}

/** One open round as this process sees it. */
interface LocalRound {
  readonly open: OpenHeader;
  readonly layout: ModelLayout;
  /** This process's participants. */
  readonly participants: Set<WorkerId>;
  readonly attacks: Map<WorkerId, WorkerAttack>;
  readonly held: Map<WorkerId, Held>;
  sealed: boolean;
}

/** The ingest of one process. */
export class Ingest {
  readonly #deps: IngestDeps;
  readonly #rounds = new Map<RunId, LocalRound>();
  /** The newest version each run opened, for telling a stale gradient from one too early. */
  readonly #latest = new Map<RunId, number>();

  constructor(deps: IngestDeps) {
    this.#deps = deps;
  }

  /** A round opened: remember it and send round:open to this process's participants. */
  open(header: OpenHeader, blobs: readonly Buffer[]): void {
    const layout = this.#deps.layout(header.config);
    const own = header.participants.filter(([, , processId]) => processId === this.#deps.self);
    this.#rounds.set(header.runId, {
      open: header,
      layout,
      participants: new Set(own.map(([workerId]) => workerId)),
      attacks: new Map(header.attacks),
      held: new Map(),
      sealed: false,
    });
    this.#latest.set(header.runId, Math.max(this.#latest.get(header.runId) ?? -1, header.version));
    this.#emit(header.deliveries, blobs);
  }

  /** A sync of the open round for one of this process's workers. */
  resync(header: ResyncHeader, blobs: readonly Buffer[]): void {
    this.#emit(header.deliveries, blobs);
  }

  #emit(deliveries: readonly DeliveryHeader[], blobs: readonly Buffer[]): void {
    for (const { round, sockets } of unpackDeliveries(deliveries, blobs, this.#deps.self))
      if (sockets.length > 0) this.#deps.emitOpen(sockets, round);
  }

  /** A worker's gradient, from the socket that speaks for it; throws ProtocolFault as one process would. */
  submit(workerId: WorkerId, submission: SubmissionEnvelope): GradientReceipt {
    if (submission.workerId !== workerId)
      throw new ProtocolFault(
        'not-your-worker',
        `this socket sends for worker ${workerId}, not ${submission.workerId}`,
      );
    const round = this.#rounds.get(submission.runId);
    const version = submission.version;
    if (round === undefined || round.open.version < version) {
      const latest = this.#latest.get(submission.runId) ?? -1;
      if (version <= latest) throw new ProtocolFault('stale-version', `version ${version} is over`);
      if (round !== undefined)
        throw new ProtocolFault('future-version', `version ${version} is not open; round ${round.open.version} is`);
      throw new ProtocolFault('round-closed', `no round is open in run ${submission.runId}`);
    }
    if (version < round.open.version)
      throw new ProtocolFault('stale-version', `version ${version} is over; round ${round.open.version} is open`);
    if (round.sealed) throw new ProtocolFault('stale-version', `round ${version} is closing`);
    if (round.held.has(workerId))
      throw new ProtocolFault('duplicate', `worker ${workerId} already sent its gradient for version ${version}`);
    if (!round.participants.has(workerId))
      throw new ProtocolFault(
        'not-participant',
        `worker ${workerId} joined after round ${version} opened; it waits for the next`,
      );

    const started = this.#deps.now();
    const multiplier = attackMultiplier(round.attacks.get(workerId) ?? null);
    const { estimate, ...decoded } = decodeGradient(submission, round.layout, round.open.config, multiplier);
    const stats = estimate.stats;
    const now = this.#deps.now();
    round.held.set(workerId, { estimate });
    const report: ContribHeader = {
      t: 'contrib',
      term: round.open.term,
      runId: round.open.runId,
      version,
      workerId,
      loss: submission.loss,
      layerStats: submission.layerStats,
      bytesUp: decoded.bytes,
      computeMs: submission.computeMs,
      ...(submission.times === undefined ? {} : { times: submission.times }),
      stats,
      at: now,
      decodeMs: now - started,
      multiplier,
    };
    // The relay forwards the messages as received: they go to the leader, which relays them next round.
    this.#deps.toLeader(report, relaysGradients(round.open.config.downlink) ? submission.layers.map(toBuffer) : []);
    return { version, bytes: decoded.bytes };
  }

  /** The leader closes the round: accept no more, and say so (after every report, on the same stream). */
  seal(term: number, runId: RunId, version: ModelVersion): void {
    const round = this.#round(term, runId, version);
    if (round) round.sealed = true;
    const sealed: SealedHeader = { t: 'sealed', term, runId, version };
    this.#deps.toLeader(sealed);
  }

  /** The leader's plan: the partial sum (or the estimates) of the listed workers this process holds. */
  plan(plan: PlanHeader): void {
    const round = this.#round(plan.term, plan.runId, plan.version);
    if (round === undefined) return;
    const mine = plan.workers.filter(([workerId]) => round.held.has(workerId));
    // The leader waits only for the processes holding a listed gradient: the others have nothing to send.
    if (mine.length === 0) return;
    const header: PartialHeader = {
      t: 'partial',
      term: plan.term,
      runId: plan.runId,
      version: plan.version,
      seq: plan.seq,
      workers: mine.map(([workerId]) => workerId),
    };
    if (plan.kind === 'estimates') {
      const blobs = mine.map(([workerId]) => {
        const estimate = round.held.get(workerId)!.estimate.dense();
        return Buffer.from(estimate.buffer, estimate.byteOffset, estimate.byteLength);
      });
      this.#deps.toLeader(header, blobs);
      return;
    }
    const sum = new Float64Array(round.layout.parameterCount);
    for (const [workerId, weight] of mine) round.held.get(workerId)!.estimate.accumulate(sum, weight, plan);
    this.#deps.toLeader(header, [Buffer.from(sum.buffer, sum.byteOffset, sum.byteLength)]);
  }

  /** The round is over (or the leader changed): forget what it held. */
  done(runId: RunId, version: ModelVersion): void {
    const round = this.#rounds.get(runId);
    if (round !== undefined && round.open.version <= version) this.#rounds.delete(runId);
  }

  /** A new leader: every round of an older one is void (the new leader reopens them). */
  reset(): void {
    this.#rounds.clear();
  }

  #round(term: number, runId: RunId, version: ModelVersion): LocalRound | undefined {
    const round = this.#rounds.get(runId);
    return round !== undefined && round.open.term === term && round.open.version === version ? round : undefined;
  }
}
