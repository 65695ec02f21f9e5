/**
 * How the leader of a cluster closes a round (docs/scaling.md, "Hierarchical
 * aggregation"): every process holding a participant seals it, the leader
 * plans the sum from the reports' statistics, each process answers with its
 * partial sum (or its estimates for the coordinate-wise rules), the leader
 * adds its own simulated workers' and finishes the rule. A process that dies
 * on the way is written off and the plan made again without its gradients.
 */
import { addPartial, aggregate, finishMean, planSum, type Aggregate, type EstimateStats } from '../../core/aggregation';
import type { WorkerId } from '../../core/protocol';
import type { RoundEstimate } from '../../core/training/roundEstimate';
import type { Contribution, OpenRound } from '../run/round';
import { RoundLost, type Run } from '../run/run';
import type { ClusterHeader, ContribHeader, PartialHeader, PlanHeader } from './messages';

/** Per run, the round whose gradients are out there: who holds each, and with what statistics. */
export interface Held {
  readonly version: number;
  /** The round it was opened for (null: none was open when it was made). */
  readonly round: OpenRound | null;
  /** Process of each participant when the round opened. */
  readonly participants: Map<WorkerId, string>;
  readonly byWorker: Map<WorkerId, { readonly process: string; readonly stats: EstimateStats }>;
}

/** What a Closing needs of its leader. */
export interface ClosingLeader {
  readonly term: number;
  /** Sends to every process (the leader's included). */
  broadcast(header: ClusterHeader, blobs?: readonly Buffer[]): void;
  /** The Closing is over. */
  closed(closing: Closing): void;
}

/** Where the leader's own partial sum sits among the processes' (no process id is empty). */
const LEADER_PARTIAL = '';

/** A round the leader is closing: sealed, planned, summed. */
export class Closing {
  readonly run: Run;
  readonly round: OpenRound;
  readonly #held: Held;
  readonly #leader: ClosingLeader;
  readonly #waitingSeal: Set<string>;
  #seq = 0;
  #plan: ReturnType<typeof planSum> | null = null;
  #contributors: WorkerId[] = [];
  #expected: Set<string> | null = null;
  /** Each process's answer to the plan: its partial sum, or its estimates. */
  readonly #partials = new Map<string, readonly Buffer[]>();
  readonly #resolve: (aggregate: Aggregate) => void;
  readonly #reject: (error: unknown) => void;
  readonly promise: Promise<Aggregate>;
  readonly #timer: NodeJS.Timeout;

  /** Whether it ended already (nothing to wait for). */
  settled = false;

  constructor(leader: ClosingLeader, run: Run, round: OpenRound, held: Held) {
    this.#leader = leader;
    this.run = run;
    this.round = round;
    this.#held = held;
    let resolve!: (aggregate: Aggregate) => void;
    let reject!: (error: unknown) => void;
    this.promise = new Promise<Aggregate>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    this.#resolve = resolve;
    this.#reject = reject;
    const processes = new Set([...held.participants.values(), ...[...held.byWorker.values()].map((h) => h.process)]);
    this.#waitingSeal = processes;
    // A process that never answers (stalled, not dead) must not hold the run forever.
    this.#timer = setTimeout(() => {
      try {
        for (const p of [...this.#waitingSeal, ...(this.#expected ?? [])]) this.processGone(p);
      } catch (error) {
        this.#end(error);
      }
    }, 15_000);
    this.#timer.unref();
    if (this.#waitingSeal.size === 0) this.#makePlan();
  }

  /** The processes this round still waits for. */
  waitingOn(): string[] {
    return [...this.#waitingSeal, ...(this.#expected ?? [])];
  }

  /** A report that arrived after the round closed but before its process sealed it: it counts. */
  late(header: ContribHeader, from: string, blobs: readonly Buffer[]): void {
    if (this.#plan !== null) return;
    this.round.add(header.workerId, contributionOf(header, blobs), header.at);
    this.round.decodeMs += header.decodeMs;
    this.#held.byWorker.set(header.workerId, { process: from, stats: header.stats });
  }

  sealed(from: string): void {
    if (!this.#waitingSeal.delete(from)) return;
    if (this.#waitingSeal.size === 0 && this.#plan === null) this.#makePlan();
  }

  partial(from: string, header: PartialHeader, blobs: readonly Buffer[]): void {
    if (header.seq !== this.#seq || this.#expected === null || !this.#expected.has(from)) return;
    this.#partials.set(from, blobs);
    this.#expected.delete(from);
    if (this.#expected.size === 0) this.#finish();
  }

  /** A process died: its gradients are lost; plan again without them. */
  processGone(process: string): void {
    const lost = [...this.#held.byWorker].filter(([, h]) => h.process === process).map(([w]) => w);
    for (const workerId of lost) {
      this.round.forget(workerId);
      this.#held.byWorker.delete(workerId);
    }
    const waited = this.#waitingSeal.delete(process);
    if (this.#plan === null) {
      if (waited && this.#waitingSeal.size === 0) this.#makePlan();
      return;
    }
    if (lost.length > 0 || this.#expected?.has(process) === true) this.#makePlan();
  }

  #makePlan(): void {
    this.#seq += 1;
    this.#partials.clear();
    const contributors = this.round
      .orderedContributors()
      .filter((w) => this.#held.byWorker.has(w) || this.#localEstimate(w) !== undefined);
    if (contributors.length === 0) {
      this.#end(
        new RoundLost(`run ${this.run.id}: every gradient of round ${this.round.version} was lost with its process`),
      );
      return;
    }
    this.#contributors = contributors;
    const rule = this.run.config.aggregation;
    const layout = this.run.layout;
    const sumRule = rule.kind === 'mean' || rule.kind === 'norm-bound';
    const plan = sumRule
      ? planSum(
          rule,
          contributors.map((w) => this.#held.byWorker.get(w)?.stats ?? this.#localEstimate(w)!.stats),
        )
      : {
          weights: contributors.map(() => 1),
          scales: layout.tensors.map(() => 0),
          count: contributors.length,
          clipped: 0,
        };
    this.#plan = plan;
    const local = contributors.flatMap((w, i) => {
      const estimate = this.#held.byWorker.has(w) ? undefined : this.#localEstimate(w);
      return estimate === undefined ? [] : [{ estimate, weight: plan.weights[i]! }];
    });
    this.#expected = new Set(contributors.flatMap((w) => this.#held.byWorker.get(w)?.process ?? []));
    const header: PlanHeader = {
      t: 'plan',
      term: this.#leader.term,
      runId: this.run.id,
      version: this.round.version,
      seq: this.#seq,
      kind: sumRule ? 'sum' : 'estimates',
      workers: contributors.map((w, i) => [w, plan.weights[i]!] as const),
      scales: plan.scales,
    };
    this.#leader.broadcast(header);
    if (local.length === 0) return;
    // The leader's own partial: the gradients it decoded itself (the server's simulated workers).
    let blobs: Buffer[];
    if (sumRule) {
      const sum = new Float64Array(layout.parameterCount);
      for (const { estimate, weight } of local) estimate.accumulate(sum, weight, plan);
      blobs = [Buffer.from(sum.buffer, sum.byteOffset, sum.byteLength)];
    } else {
      blobs = local.map(({ estimate }) => {
        const dense = estimate.dense();
        return Buffer.from(dense.buffer, dense.byteOffset, dense.byteLength);
      });
    }
    this.#partials.set(LEADER_PARTIAL, blobs);
    if (this.#expected.size === 0) this.#finish();
  }

  /** The estimate of a contribution decoded on the leader itself (a simulated worker's), with its statistics. */
  #localEstimate(workerId: WorkerId): RoundEstimate | undefined {
    return this.round.contributions.get(workerId)?.estimate ?? undefined;
  }

  #finish(): void {
    const plan = this.#plan!;
    const layout = this.run.layout;
    const offsets = layout.tensors.map((t) => t.offset);
    const length = layout.parameterCount;
    const rule = this.run.config.aggregation;
    try {
      if (rule.kind === 'mean' || rule.kind === 'norm-bound') {
        const total = new Float64Array(length);
        for (const blobs of this.#partials.values()) addPartial(total, new Float64Array(copy(blobs[0]!)));
        this.#end(null, { value: finishMean(total, plan, offsets), clipped: plan.clipped, dropped: 0 });
      } else {
        const estimates: Float32Array[] = [];
        for (const blobs of this.#partials.values())
          for (const blob of blobs) estimates.push(new Float32Array(copy(blob)));
        if (estimates.length !== this.#contributors.length)
          throw new Error(`expected ${this.#contributors.length} estimates, got ${estimates.length}`);
        this.#end(null, aggregate(rule, estimates, length, offsets));
      }
    } catch (error) {
      this.#end(error);
    }
  }

  #end(error: unknown, aggregate?: Aggregate): void {
    clearTimeout(this.#timer);
    this.settled = true;
    this.#leader.closed(this);
    if (aggregate !== undefined) this.#resolve(aggregate);
    else this.#reject(error);
  }
}

/** An aligned copy of a blob (a Buffer from Redis may start at any byte). */
function copy(blob: Buffer): ArrayBuffer {
  const bytes = new Uint8Array(blob.byteLength);
  bytes.set(blob);
  return bytes.buffer;
}

/**
 * The part of a report a round keeps (the estimates stay with the process that decoded them); under the `relay` and
 * `auto` downlinks its blobs are the messages as received, which the next round forwards.
 */
export function contributionOf(header: ContribHeader, blobs: readonly Buffer[]): Contribution {
  return {
    estimate: null,
    ...(blobs.length === 0 ? {} : { layers: blobs.map((blob) => new Uint8Array(copy(blob))) }),
    multiplier: header.multiplier,
    loss: header.loss,
    layerStats: header.layerStats,
    bytesUp: header.bytesUp,
    computeMs: header.computeMs,
    ...(header.times === undefined ? {} : { times: header.times }),
  };
}
