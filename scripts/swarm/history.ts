/**
 * The history file a swarm writes: the run's configuration and, per closed
 * round, what the paper's plots need (loss, accuracy, bytes, variance, time).
 * Built from the server's RoundMetrics, so it is what the aggregator measured,
 * not what the workers believe they sent.
 */
import { modelVariance } from '../../core/atomo';
import type { LayerSentAs, RoundAggregation, RoundMetrics, RunConfig, WorkerTimes } from '../../core/protocol';
import { downlinkBytes, uplinkBytes } from '../../core/traffic/frames';
import { partsTotalMs, roundTotalsParts, type LinkModel, type RoundTimeParts } from '../../core/traffic/linkModel';
import type { SwarmBackend } from './options';

/** One closed round, flattened for plotting. */
export interface HistoryRound extends Pick<
  RoundMetrics,
  | 'contributors'
  | 'trainLoss'
  | 'testLoss'
  | 'testAccuracy'
  | 'bytesUp'
  | 'bytesDown'
  | 'cumulativeBytesUp'
  | 'cumulativeBytesDown'
> {
  /** Model version trained this round (0-based); the round's result is version + 1. */
  readonly round: number;
  /** Every frame on the workers' sockets (core/traffic), this round and since the start: worker → server and back. */
  readonly wireUp: number;
  readonly wireDown: number;
  readonly cumulativeWireUp: number;
  readonly cumulativeWireDown: number;
  /** Σ over layers of the closed-form E‖ĝ − g‖² (mean over workers). */
  readonly varianceClosedForm: number;
  /** Σ over layers of the realised ‖ĝ − g‖² (mean over workers). */
  readonly varianceRealised: number;
  /** Both divided by Σ‖g‖²: the relative variance of the whole gradient. */
  readonly normalisedClosedForm: number;
  readonly normalisedRealised: number;
  /** round:open to close, in ms. */
  readonly durationMs: number;
  /**
   * Each contributor's own time this round (ms, as it reported: replica update, forward/backward, compression and
   * encoding; docs/protocol.md, "Worker times").
   */
  readonly workerComputeMs: readonly number[];
  /**
   * Per contributor, in the same order: the compression and encoding parts of its time and the clock that measured
   * them (`thread-cpu` or `wall`), or null when it sent none. Absent in histories written before it was recorded.
   */
  readonly workerTimes?: readonly (WorkerTimes | null)[];
  /**
   * Per contributor, in the same order: the model payload sent to it (the dense model, a sync or an update: under
   * `auto` and `relay` they differ from worker to worker). Absent in histories written before it was recorded.
   */
  readonly workerBytesDown?: readonly number[];
  /** The server's decoding and update time (ms). */
  readonly serverMs: number;
  readonly participants: number;
  /**
   * Per layer: the indicator ‖G‖_*·√(m+n)/‖g‖₁ (null in rounds nobody measured
   * it), the mean encoded bytes per worker, and how the workers sent it (atomo-auto's
   * choice). Absent in histories written before it was recorded.
   */
  readonly layers?: readonly HistoryLayer[];
  /**
   * The rule that combined the round's estimates, with how many it clipped (norm bound) and how many values per
   * coordinate it dropped (median, trimmed mean). Absent in histories written before it was recorded.
   */
  readonly aggregation?: RoundAggregation;
}

/** One layer of one round in a history (from RoundMetrics.layers). */
export interface HistoryLayer {
  readonly indicator: number | null;
  readonly bytes: number | null;
  readonly sentAs: Partial<Record<LayerSentAs, number>>;
}

/** What `--out` receives. */
export interface SwarmHistory {
  readonly runId: string;
  readonly config: RunConfig;
  readonly workers: number;
  readonly backend: SwarmBackend;
  readonly startedAt: string;
  readonly wallSeconds: number;
  readonly rounds: readonly HistoryRound[];
}

/** Flattens one server record (sums the per-layer variances). */
export function toHistoryRound(metrics: RoundMetrics): HistoryRound {
  const variance = modelVariance(metrics.layers);
  return {
    round: metrics.version,
    contributors: metrics.contributors,
    trainLoss: metrics.trainLoss,
    testLoss: metrics.testLoss,
    testAccuracy: metrics.testAccuracy,
    bytesUp: metrics.bytesUp,
    bytesDown: metrics.bytesDown,
    cumulativeBytesUp: metrics.cumulativeBytesUp,
    cumulativeBytesDown: metrics.cumulativeBytesDown,
    wireUp: uplinkBytes(metrics.traffic),
    wireDown: downlinkBytes(metrics.traffic),
    cumulativeWireUp: uplinkBytes(metrics.cumulativeTraffic),
    cumulativeWireDown: downlinkBytes(metrics.cumulativeTraffic),
    varianceClosedForm: variance.closedForm,
    varianceRealised: variance.realised,
    normalisedClosedForm: variance.closedRel,
    normalisedRealised: variance.realisedRel,
    durationMs: metrics.durations.totalMs,
    workerComputeMs: metrics.workers.map((w) => w.computeMs),
    workerTimes: metrics.workers.map((w) => w.times ?? null),
    workerBytesDown: metrics.workers.map((w) => w.bytesDown),
    serverMs: metrics.durations.decodeMs + metrics.durations.updateMs,
    participants: metrics.participants,
    layers: metrics.layers.map((l) => ({
      indicator: l.indicator ?? null,
      bytes: l.bytes ?? null,
      sentAs: l.sentAs ?? {},
    })),
    ...(metrics.aggregation === undefined ? {} : { aggregation: metrics.aggregation }),
  };
}

/** The figures a summary line and the comparison table show. */
export interface HistorySummary {
  readonly rounds: number;
  readonly finalAccuracy: number | null;
  /** First round (1-based count of rounds done) whose evaluation reached `target`, and the upstream bytes by then. */
  readonly roundsToTarget: number | null;
  readonly bytesUpToTarget: number | null;
  /** Wire bytes both ways by then. */
  readonly wireToTarget: number | null;
  readonly totalBytesUp: number;
  readonly totalWire: number;
  readonly meanBytesUpPerRound: number;
  readonly meanNormalisedVariance: number;
  readonly meanNormalisedRealised: number;
}

/** Summarises a history against an accuracy target (0..1). */
export function summarise(rounds: readonly HistoryRound[], target: number): HistorySummary {
  const evaluated = rounds.filter((r) => r.testAccuracy !== null);
  const reached = evaluated.find((r) => (r.testAccuracy ?? 0) >= target);
  const last = rounds.at(-1);
  const mean = (pick: (r: HistoryRound) => number) =>
    rounds.length === 0 ? 0 : rounds.reduce((sum, r) => sum + pick(r), 0) / rounds.length;
  return {
    rounds: rounds.length,
    finalAccuracy: evaluated.at(-1)?.testAccuracy ?? null,
    roundsToTarget: reached ? reached.round + 1 : null,
    bytesUpToTarget: reached ? reached.cumulativeBytesUp : null,
    wireToTarget: reached ? reached.cumulativeWireUp + reached.cumulativeWireDown : null,
    totalBytesUp: last?.cumulativeBytesUp ?? 0,
    totalWire: last === undefined ? 0 : last.cumulativeWireUp + last.cumulativeWireDown,
    meanBytesUpPerRound: mean((r) => r.bytesUp),
    meanNormalisedVariance: mean((r) => r.normalisedClosedForm),
    meanNormalisedRealised: mean((r) => r.normalisedRealised),
  };
}

/**
 * A worker's step timed on an idle core (scripts/compare/calibration.ts): the gradient's compute, the compression
 * and the encoding, ms of the thread's CPU time.
 */
export interface CalibratedTimes {
  readonly computeMs: number;
  readonly compressMs: number;
  readonly encodeMs: number;
}

/**
 * Each contributor's time on a recorded round, ms: with a calibration, its calibrated compute, compression and
 * encoding plus the replica's update it reported (`applyMs`, 0 where it reported none); without one, its own
 * `computeMs` (all of it, on the clock its times name).
 */
export function contributorMs(round: HistoryRound, calibration?: CalibratedTimes): number[] {
  if (calibration === undefined) return [...round.workerComputeMs];
  const step = calibration.computeMs + calibration.compressMs + calibration.encodeMs;
  return round.workerComputeMs.map((_, i) => step + (round.workerTimes?.[i]?.applyMs ?? 0));
}

/**
 * The simulated wall-clock time of a recorded round under `link`
 * (core/traffic/linkModel.ts): each contributor's compute, compression and
 * encoding time (contributorMs: calibrated where `calibration` is given,
 * else as measured), and the round's wire bytes shared over its workers:
 * uploads evenly (all train the same model with the same scheme, so their
 * messages are the same size up to sampling), downloads in proportion to the
 * model payload each was sent where the history records it (roundTotalsTimeMs).
 * The server link carries the whole round's bytes: every participant's
 * download and every contributor's upload.
 */
export function simulatedRoundMs(round: HistoryRound, link: LinkModel, calibration?: CalibratedTimes): number {
  return partsTotalMs(simulatedRoundParts(round, link, calibration));
}

/** Where that simulated time of a recorded round goes (core/traffic/linkModel.ts, RoundTimeParts). */
export function simulatedRoundParts(
  round: HistoryRound,
  link: LinkModel,
  calibration?: CalibratedTimes,
): RoundTimeParts {
  const totals =
    round.workerBytesDown === undefined
      ? round
      : { ...round, downPayload: { perContributor: round.workerBytesDown, total: round.bytesDown } };
  return roundTotalsParts(totals, contributorMs(round, calibration), round.serverMs, link);
}
