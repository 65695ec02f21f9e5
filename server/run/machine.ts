/**
 * A run's round state machine (docs/design.md, "Server: rounds and
 * validation"): opening a round to the connected members, counting their
 * gradients, closing it at the deadline or when all reported, the update and
 * its evaluation, and the error boundary that pauses the run on a fault.
 */
import type { Aggregate } from '../../core/aggregation';
import type { ModelLayout } from '../../core/model/layout';
import { asModelVersion, type ModelVersion, type RoundMetrics, type WorkerId } from '../../core/protocol';
import { aggregateEstimates } from '../../core/training/modelUpdate';
import type { Evaluation } from '../model/model';
import type { ModelView } from './downlink';
import { buildRoundMetrics, isEvaluationRound, lastAccuracy } from './metrics';
import { connectedMembers, countMissed, dormantMembers, type ReturnWait } from './members';
import { OpenRound, expectContribution, roundEstimates, type Contribution } from './round';
import type { Run } from './run';
import { RoundLost, type RunDeps } from './runDeps';
import type { RunCore } from './snapshot';

/** The round machine of one run. */
export class RoundMachine {
  /** The run its hooks are told about. */
  readonly #run: Run;
  readonly #core: RunCore;
  readonly #deps: RunDeps;
  #cancelDeadline: (() => void) | null = null;
  #openScheduled = false;
  #disposed = false;
  /** True while a closed round is combined elsewhere, evaluated or committed; no round opens meanwhile. */
  #evaluating = false;
  /** Bumped by reset and model changes: results of work started before are dropped. */
  #epoch = 0;
  /** A run restored running (the server restarted): its first round waits for the class to come back. */
  #awaitingReturn: ReturnWait | null;

  constructor(run: Run, core: RunCore, deps: RunDeps, awaitingReturn: ReturnWait | null) {
    this.#run = run;
    this.#core = core;
    this.#deps = deps;
    this.#awaitingReturn = awaitingReturn;
  }

  get layout(): ModelLayout {
    return this.#deps.model.layout(this.#core.config.model);
  }

  /**
   * The model at its current version, as the downlink reads it; its mode is the run's setting (docs/protocol.md,
   * "Downlink"), in one process and in a cluster alike.
   */
  model(): ModelView {
    const { model } = this.#deps;
    const core = this.#core;
    const kind = core.config.model;
    return {
      runId: core.runId,
      version: core.version,
      params: core.params,
      velocity: core.velocity,
      get layout() {
        return model.layout(kind);
      },
      mode: core.config.downlink,
    };
  }

  /** The open round a gradient of `workerId` for `version` may join, or throws ProtocolFault. */
  expectContribution(workerId: WorkerId, version: ModelVersion): OpenRound {
    const { round, runId, status } = this.#core;
    return expectContribution(round, { runId, status, version: this.#core.version }, workerId, version);
  }

  /** Counts an accepted gradient in the open round and closes it when it can. */
  record(round: OpenRound, workerId: WorkerId, contribution: Contribution, now: number, decodeMs: number): void {
    round.decodeMs += decodeMs;
    round.add(workerId, contribution, now);
    const member = this.#core.members.get(workerId);
    if (member) {
      // Measured on the server's clock alone, so a tab's clock skew cannot distort it.
      member.lastSeenAt = now;
      member.latencyMs = now - round.openedAt;
    }
    if (round.canClose()) this.close();
    else this.#deps.hooks.changed(this.#run);
  }

  /** Back to version 0: fresh weights from the seed, zero momentum, empty history, no traffic. */
  resetModel(): void {
    const core = this.#core;
    this.#epoch += 1;
    this.#evaluating = false;
    core.params = this.#deps.model.initialWeights(core.config.model, core.config.seed);
    core.velocity = new Float32Array(core.params.length);
    core.version = asModelVersion(0);
    core.history = [];
    core.downlink.reset(core.members);
    core.traffic.reset(core.members);
  }

  scheduleOpen(): void {
    if (this.#openScheduled || this.#core.round !== null) return;
    this.#openScheduled = true;
    this.#deps.scheduler.defer(
      this.#guarded('opening a round', () => {
        this.#openScheduled = false;
        this.#openRoundIfReady();
      }),
    );
  }

  #openRoundIfReady(): void {
    const core = this.#core;
    if (this.#disposed || this.#evaluating || core.status !== 'running' || core.round !== null) return;
    const config = core.config;
    if (core.version >= config.maxRounds) {
      core.status = 'finished';
      this.#deps.hooks.changed(this.#run);
      return;
    }
    const participants = connectedMembers(core.members);
    if (participants.length === 0) return; // idle until a worker connects
    if (this.#waitingForReturn(participants.length)) return;
    const { scheduler } = this.#deps;
    const dormant = dormantMembers(core.members, participants, config.dormantAfter);
    const openedAt = scheduler.now();
    const deadline = openedAt + config.roundDeadlineMs;
    const { deliveries, choice } = core.downlink.deliveries(this.model(), core.members, participants, deadline);
    const encoded = scheduler.now();
    const bytes = new Map<WorkerId, number>();
    for (const d of deliveries) for (const id of d.workers) bytes.set(id, d.bytes);
    const round = new OpenRound(
      core.version,
      participants,
      bytes,
      openedAt,
      config.roundDeadlineMs,
      config.quorum,
      dormant,
    );
    for (const d of deliveries) round.deliveries[d.kind] += d.workers.length;
    round.downlinkChoice = choice;
    core.round = round;
    this.#cancelDeadline = scheduler.after(
      config.roundDeadlineMs,
      this.#guarded('the round deadline', () => this.#onDeadline(round)),
    );
    this.#deps.hooks.openRound(
      this.#run,
      deliveries.filter((d) => d.workers.length > 0),
    );
    round.openMs = { downlinkMs: encoded - openedAt, emitMs: scheduler.now() - encoded };
    this.#deps.hooks.changed(this.#run);
  }

  /** After a restart, whether the first round should wait for more of the class to reconnect (ReturnWait). */
  #waitingForReturn(connected: number): boolean {
    const wait = this.#awaitingReturn;
    if (wait === null) return false;
    const wake = this.#guarded('waiting for the class to reconnect', () => this.scheduleOpen());
    if (wait.holds(connected, this.#core.config, this.#deps.scheduler, wake)) return true;
    this.stopAwaitingReturn();
    return false;
  }

  stopAwaitingReturn(): void {
    this.#awaitingReturn?.stop();
    this.#awaitingReturn = null;
  }

  #onDeadline(round: OpenRound): void {
    if (this.#core.round !== round) return;
    this.#cancelDeadline = null;
    round.deadlinePassed = true;
    if (round.canClose()) this.close();
  }

  /** A worker left (or was removed): it is dropped from the open round, never waited for. */
  leave(workerId: WorkerId): void {
    const round = this.#core.round;
    if (round === null) return;
    round.drop(workerId);
    this.settle(round);
  }

  /** After workers left the open round: with everyone asked gone it opens again for whoever is left, or it closes. */
  settle(round: OpenRound): void {
    if (round.isAbandoned()) {
      this.abandon();
      this.scheduleOpen();
    } else if (round.canClose()) {
      this.close();
    }
  }

  abandon(): void {
    this.#cancelDeadline?.();
    this.#cancelDeadline = null;
    this.#core.round = null;
  }

  /** Stops every timer; the run is being deleted or the server closes. */
  dispose(): void {
    this.#disposed = true;
    this.stopAwaitingReturn();
    this.abandon();
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
    const core = this.#core;
    const reason = `${what} failed: ${error instanceof Error ? error.message : String(error)}`;
    try {
      this.#deps.onError(new Error(`run ${core.runId}: ${reason}`, { cause: error }));
      this.abandon();
      this.#epoch += 1;
      this.#evaluating = false;
      if (core.status === 'running') core.status = 'paused';
      core.fault = reason;
      this.#deps.hooks.changed(this.#run);
    } catch (secondary) {
      // Even reporting failed (a hook threw): the run is paused all the same.
      core.status = core.status === 'running' ? 'paused' : core.status;
      core.fault = reason;
      console.error(`[aggregator] run ${core.runId}: reporting a fault failed`, secondary);
    }
  }

  /**
   * Closes the round behind the error boundary: a fault pauses the run, never reaches the caller (a socket handler or a
   * timer).
   */
  close(): void {
    const round = this.#core.round!;
    this.abandon();
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
      // The configured rule (robust by default) combines the estimates, as every relay replica does; each was checked
      // finite when it arrived.
      const combined = aggregateEstimates(this.layout, this.#core.config.aggregation, roundEstimates(round));
      this.#applyUpdate(round, combined, updateStarted, this.#deps.scheduler.now());
      return;
    }
    // Other processes hold the estimates: no round opens until their partial sums are in.
    this.#awaitThen(combine(this.#run, round), `closing round ${round.version}`, (combined) =>
      this.#applyUpdate(round, combined, updateStarted, this.#deps.scheduler.now()),
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
          this.scheduleOpen();
        })(),
    );
  }

  /** The step of a closed round from its aggregate; `combinedAt` is when the aggregate was in. */
  #applyUpdate(round: OpenRound, combined: Aggregate, updateStarted: number, combinedAt: number): void {
    const { scheduler } = this.#deps;
    const core = this.#core;
    const config = core.config;
    const layout = this.layout;
    // The same step, from the same aggregate, moves every worker's replica (core/training/modelUpdate.ts).
    const downlink = config.downlink;
    const { next, layers: downlinkLayers } = core.downlink.step(this.model(), round, combined, config);
    core.params = next.params;
    core.velocity = next.velocity;
    core.version = asModelVersion(core.version + 1);
    const stepped = scheduler.now();
    const updateMs = stepped - updateStarted;

    core.traffic.chargeRound(round, core.members);
    countMissed(core.members, round.participants, round.contributions);
    if (core.version >= config.maxRounds) core.status = 'finished';
    const outcome = {
      runId: core.runId,
      closedAt: scheduler.now(),
      layerCount: layout.tensors.length,
      cumulativeBytesUp: core.traffic.bytesUp,
      cumulativeBytesDown: core.traffic.bytesDown,
      traffic: core.traffic.closeRound(),
      cumulativeTraffic: core.traffic.traffic,
      updateMs,
      combineMs: combinedAt - updateStarted,
      stepMs: stepped - combinedAt,
      aggregation: { rule: config.aggregation, clipped: combined.clipped, dropped: combined.dropped },
      downlink: {
        mode: downlink,
        ...round.deliveries,
        layers: downlinkLayers,
        ...(downlink === 'full' ? {} : { hash: core.downlink.hash(this.model()) }),
        ...(round.downlinkChoice === null ? {} : { choice: round.downlinkChoice }),
      },
    };
    // The history grows with the weights, so any checkpoint taken from here on is consistent.
    const index = core.history.push(buildRoundMetrics(round, { ...outcome, evaluation: null, evalMs: 0 })) - 1;
    const contributors = round.orderedContributors();
    const publish = (metrics: RoundMetrics) => {
      core.history[index] = metrics;
      const announce = () => {
        this.#deps.hooks.roundClosed(this.#run, metrics, contributors);
        this.#deps.hooks.changed(this.#run);
        this.scheduleOpen();
      };
      const committed = this.#deps.hooks.commitRound?.(this.#run);
      if (committed === undefined) announce();
      else this.#awaitThen(committed, `committing round ${metrics.version}`, announce);
    };
    if (!isEvaluationRound(core.version, config, lastAccuracy(core.history))) {
      publish(core.history[index]!);
      return;
    }
    // Evaluation may be asynchronous: no round opens until it is done, and a
    // reset meanwhile (a new epoch) discards its result.
    const epoch = this.#epoch;
    this.#evaluating = true;
    const evalStarted = scheduler.now();
    void this.#evaluate().then((evaluation) =>
      this.#guarded('publishing an evaluated round', () => {
        if (this.#disposed || epoch !== this.#epoch) return;
        this.#evaluating = false;
        publish(buildRoundMetrics(round, { ...outcome, evaluation, evalMs: scheduler.now() - evalStarted }));
      })(),
    );
  }

  /** The evaluation of the current weights, or null (reported) when it failed or is not finite. */
  #evaluate(): Promise<Evaluation | null> {
    const core = this.#core;
    const { onError } = this.#deps;
    const { model, dataset, evalExamples } = core.config;
    return this.#deps.model.evaluate(model, core.params.slice(), dataset, evalExamples).then(
      (evaluation) => {
        if (Number.isFinite(evaluation.loss) && Number.isFinite(evaluation.accuracy)) return evaluation;
        const what = `the evaluation of version ${core.version} is not finite (loss ${evaluation.loss})`;
        onError(new Error(`run ${core.runId}: ${what}; not recorded`));
        return null;
      },
      (error: unknown) => {
        onError(new Error(`run ${core.runId}: the evaluation of version ${core.version} failed`, { cause: error }));
        return null;
      },
    );
  }
}
