/**
 * Round metrics: built from a closed round, kept in the
 * run's history, streamed to dashboards and exported as JSON or CSV.
 */
import { NO_TRAFFIC, downlinkBytes, totalBytes, uplinkBytes, type WireTraffic } from '../../core/traffic/frames';
import type {
  LayerSentAs,
  LayerVariance,
  ModelVersion,
  RoundDurations,
  RoundMetrics,
  RunConfig,
  WorkerRoundMetrics,
} from '../../core/protocol';
import type { Evaluation } from '../model/model';
import type { OpenRound } from './round';

/** What the run adds to a round's own record: the fields of RoundMetrics it knows, and what they are made from. */
export interface RoundOutcome extends Pick<
  RoundMetrics,
  | 'runId'
  | 'closedAt'
  | 'cumulativeBytesUp'
  | 'cumulativeBytesDown'
  | 'traffic'
  | 'cumulativeTraffic'
  | 'downlink'
  | 'aggregation'
> {
  readonly layerCount: number;
  readonly evaluation: Evaluation | null;
  readonly updateMs: number;
  /** updateMs split into combining the estimates and the step (RoundDurations). */
  readonly combineMs: number;
  readonly stepMs: number;
  readonly evalMs: number;
}

/** The record of a closed round; per-layer variances are means over the contributors. */
export function buildRoundMetrics(round: OpenRound, outcome: RoundOutcome): RoundMetrics {
  const contributors = round.orderedContributors();
  const contributions = contributors.map((workerId) => round.contributions.get(workerId)!);
  const workers = contributors.map((workerId, i): WorkerRoundMetrics => {
    const c = contributions[i]!;
    return {
      workerId,
      loss: c.loss,
      bytesUp: c.bytesUp,
      bytesDown: round.bytesDown.get(workerId) ?? 0,
      computeMs: c.computeMs,
      ...(c.times === undefined ? {} : { times: c.times }),
    };
  });
  const n = contributors.length;
  const sum = (values: readonly number[]): number => values.reduce((total, value) => total + value, 0);
  const layers = Array.from({ length: outcome.layerCount }, (_, layer): LayerVariance => {
    const stats = contributions.map((contribution) => contribution.layerStats[layer]!);
    const indicators = stats.flatMap((s) => (s.indicator === undefined ? [] : [s.indicator]));
    const sentAs: Partial<Record<LayerSentAs, number>> = {};
    for (const contribution of contributions) {
      const kind = contribution.sentAs?.[layer];
      if (kind !== undefined && kind !== null) sentAs[kind] = (sentAs[kind] ?? 0) + 1;
    }
    return {
      closedForm: sum(stats.map((s) => s.closedForm)) / n,
      realised: sum(stats.map((s) => s.realised)) / n,
      gradientNormSq: sum(stats.map((s) => s.gradientNormSq)) / n,
      indicator: indicators.length > 0 ? sum(indicators) / indicators.length : null,
      bytes: sum(contributions.map((contribution) => contribution.layerBytes?.[layer] ?? 0)) / n,
      sentAs,
    };
  });
  const bytesDown = sum([...round.bytesDown.values()]);
  const durations: RoundDurations = {
    totalMs: outcome.closedAt - round.openedAt,
    collectMs: round.lastAcceptedAt - round.openedAt,
    decodeMs: round.decodeMs,
    updateMs: outcome.updateMs,
    evalMs: outcome.evalMs,
    combineMs: outcome.combineMs,
    stepMs: outcome.stepMs,
    ...round.openMs,
  };
  return {
    runId: outcome.runId,
    version: round.version,
    closedAt: outcome.closedAt,
    participants: round.bytesDown.size,
    contributors: contributors.length,
    trainLoss: sum(workers.map((w) => w.loss)) / n,
    testLoss: outcome.evaluation?.loss ?? null,
    testAccuracy: outcome.evaluation?.accuracy ?? null,
    bytesUp: sum(workers.map((w) => w.bytesUp)),
    bytesDown,
    cumulativeBytesUp: outcome.cumulativeBytesUp,
    cumulativeBytesDown: outcome.cumulativeBytesDown,
    traffic: outcome.traffic,
    cumulativeTraffic: outcome.cumulativeTraffic,
    layers,
    workers,
    durations,
    ...(outcome.downlink === undefined ? {} : { downlink: outcome.downlink }),
    ...(outcome.aggregation === undefined ? {} : { aggregation: outcome.aggregation }),
  };
}

/** The CSV's columns that are fields of a round's record, in order. */
const ROUND_COLUMNS = [
  'version',
  'closedAt',
  'participants',
  'contributors',
  'trainLoss',
  'testLoss',
  'testAccuracy',
  'bytesUp',
  'bytesDown',
  'cumulativeBytesUp',
  'cumulativeBytesDown',
] as const satisfies readonly (keyof RoundMetrics)[];

/** Then the frames on the wire: this round's by kind, and the run's so far by direction. */
const WIRE_COLUMNS: Readonly<Record<string, (round: WireTraffic, cumulative: WireTraffic) => number>> = {
  wireGradientUp: (round) => round.gradientUp,
  wireControlUp: (round) => round.controlUp,
  wireModelDown: (round) => round.modelDown,
  wireControlDown: (round) => round.controlDown,
  cumulativeWireUp: (_, cumulative) => uplinkBytes(cumulative),
  cumulativeWireDown: (_, cumulative) => downlinkBytes(cumulative),
  cumulativeWireTotal: (_, cumulative) => totalBytes(cumulative),
};

/** Then the round's durations, and per layer (layerN_*) these fields of its LayerVariance. */
const DURATION_COLUMNS = [
  'totalMs',
  'collectMs',
  'decodeMs',
  'updateMs',
  'evalMs',
] as const satisfies readonly (keyof RoundDurations)[];
const LAYER_COLUMNS = [
  'closedForm',
  'realised',
  'gradientNormSq',
  'indicator',
  'bytes',
] as const satisfies readonly (keyof LayerVariance)[];

/** Columns of the CSV export: one row per round; per-layer variances, indicator and bytes as layerN_* columns. */
export function historyToCsv(history: readonly RoundMetrics[]): string {
  const layerCount = history.reduce((most, m) => Math.max(most, m.layers.length), 0);
  const layers = Array.from({ length: layerCount }, (_, layer) => layer);
  const header = [
    ...ROUND_COLUMNS,
    ...Object.keys(WIRE_COLUMNS),
    ...DURATION_COLUMNS,
    ...layers.flatMap((layer) => LAYER_COLUMNS.map((field) => `layer${layer}_${field}`)),
  ];
  const rows = history.map((m) => {
    // Rounds checkpointed before frames were counted have no traffic.
    const round = (m.traffic as WireTraffic | undefined) ?? NO_TRAFFIC;
    const cumulative = (m.cumulativeTraffic as WireTraffic | undefined) ?? NO_TRAFFIC;
    const cells: (number | null)[] = [
      ...ROUND_COLUMNS.map((field) => m[field]),
      ...Object.values(WIRE_COLUMNS).map((cell) => cell(round, cumulative)),
      ...DURATION_COLUMNS.map((field) => m.durations[field]),
      ...layers.flatMap((layer) => LAYER_COLUMNS.map((field) => m.layers[layer]?.[field] ?? null)),
    ];
    return cells.map((cell) => (cell === null ? '' : String(cell))).join(',');
  });
  return [header.join(','), ...rows].join('\n') + '\n';
}

/**
 * Whether model version `trained` (after the update) is evaluated: every evalEvery rounds, at the last, and every
 * round while `lastAccuracy` (the last evaluated one) is within evalNear.within below one of its targets.
 */
export function isEvaluationRound(
  trained: ModelVersion,
  config: Pick<RunConfig, 'evalEvery' | 'maxRounds' | 'evalNear'>,
  lastAccuracy: number | null,
): boolean {
  if (trained % config.evalEvery === 0 || trained === config.maxRounds) return true;
  const near = config.evalNear;
  if (near === undefined || lastAccuracy === null) return false;
  return near.targets.some((target) => lastAccuracy < target && lastAccuracy >= target - near.within);
}

/** The test accuracy of a history's last evaluated round, null before the first. */
export function lastAccuracy(history: readonly RoundMetrics[]): number | null {
  for (let i = history.length - 1; i >= 0; i--) {
    const accuracy = history[i]!.testAccuracy;
    if (accuracy !== null) return accuracy;
  }
  return null;
}
