/**
 * Round metrics: built from a closed round, kept in the
 * run's history, streamed to dashboards and exported as JSON or CSV.
 */
import { NO_TRAFFIC, downlinkBytes, totalBytes, uplinkBytes, type WireTraffic } from '../core/traffic/frames';
import type { DownlinkMetrics, LayerSentAs, LayerVariance, ModelVersion, RoundDurations, RoundMetrics, RunId, WorkerRoundMetrics } from '../core/protocol';
import type { Evaluation } from './model';
import type { OpenRound } from './round';

/** What the run adds to a round's own record. */
export interface RoundOutcome {
  readonly runId: RunId;
  readonly closedAt: number;
  readonly layerCount: number;
  readonly evaluation: Evaluation | null;
  readonly cumulativeBytesUp: number;
  readonly cumulativeBytesDown: number;
  readonly traffic: WireTraffic;
  readonly cumulativeTraffic: WireTraffic;
  readonly updateMs: number;
  readonly evalMs: number;
  /** How the model travelled (absent in tests that build metrics by hand). */
  readonly downlink?: DownlinkMetrics;
}

/** The record of a closed round; per-layer variances are means over the contributors. */
export function buildRoundMetrics(round: OpenRound, outcome: RoundOutcome): RoundMetrics {
  const contributors = round.orderedContributors();
  const workers: WorkerRoundMetrics[] = contributors.map((workerId) => {
    const c = round.contributions.get(workerId)!;
    return { workerId, loss: c.loss, bytesUp: c.bytesUp, bytesDown: round.bytesDown.get(workerId) ?? 0, computeMs: c.computeMs };
  });
  const layers: LayerVariance[] = [];
  for (let layer = 0; layer < outcome.layerCount; layer++) {
    let closedForm = 0;
    let realised = 0;
    let gradientNormSq = 0;
    let indicatorSum = 0;
    let indicators = 0;
    let bytes = 0;
    const sentAs: Partial<Record<LayerSentAs, number>> = {};
    for (const workerId of contributors) {
      const contribution = round.contributions.get(workerId)!;
      const stats = contribution.layerStats[layer]!;
      closedForm += stats.closedForm;
      realised += stats.realised;
      gradientNormSq += stats.gradientNormSq;
      if (stats.indicator !== undefined) {
        indicatorSum += stats.indicator;
        indicators++;
      }
      bytes += contribution.layerBytes?.[layer] ?? 0;
      const kind = contribution.sentAs?.[layer];
      if (kind !== undefined && kind !== null) sentAs[kind] = (sentAs[kind] ?? 0) + 1;
    }
    const n = contributors.length;
    layers.push({
      closedForm: closedForm / n,
      realised: realised / n,
      gradientNormSq: gradientNormSq / n,
      indicator: indicators > 0 ? indicatorSum / indicators : null,
      bytes: bytes / n,
      sentAs,
    });
  }
  let bytesDown = 0;
  for (const bytes of round.bytesDown.values()) bytesDown += bytes;
  const durations: RoundDurations = {
    totalMs: outcome.closedAt - round.openedAt,
    collectMs: round.lastAcceptedAt - round.openedAt,
    decodeMs: round.decodeMs,
    updateMs: outcome.updateMs,
    evalMs: outcome.evalMs,
  };
  return {
    runId: outcome.runId,
    version: round.version,
    closedAt: outcome.closedAt,
    participants: round.bytesDown.size,
    contributors: contributors.length,
    trainLoss: workers.reduce((sum, w) => sum + w.loss, 0) / workers.length,
    testLoss: outcome.evaluation?.loss ?? null,
    testAccuracy: outcome.evaluation?.accuracy ?? null,
    bytesUp: workers.reduce((sum, w) => sum + w.bytesUp, 0),
    bytesDown,
    cumulativeBytesUp: outcome.cumulativeBytesUp,
    cumulativeBytesDown: outcome.cumulativeBytesDown,
    traffic: outcome.traffic,
    cumulativeTraffic: outcome.cumulativeTraffic,
    layers,
    workers,
    durations,
    ...(outcome.downlink === undefined ? {} : { downlink: outcome.downlink }),
  };
}

/** Columns of the CSV export: one row per round; per-layer variances, indicator and bytes as layerN_* columns. */
export function historyToCsv(history: readonly RoundMetrics[]): string {
  const layerCount = history.reduce((most, m) => Math.max(most, m.layers.length), 0);
  const header = [
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
    'wireGradientUp',
    'wireControlUp',
    'wireModelDown',
    'wireControlDown',
    'cumulativeWireUp',
    'cumulativeWireDown',
    'cumulativeWireTotal',
    'totalMs',
    'collectMs',
    'decodeMs',
    'updateMs',
    'evalMs',
  ];
  for (let layer = 0; layer < layerCount; layer++) {
    header.push(`layer${layer}_closedForm`, `layer${layer}_realised`, `layer${layer}_gradientNormSq`, `layer${layer}_indicator`, `layer${layer}_bytes`);
  }
  const rows = history.map((m) => {
    // Rounds checkpointed before frames were counted have no traffic.
    const round = (m.traffic as WireTraffic | undefined) ?? NO_TRAFFIC;
    const cumulative = (m.cumulativeTraffic as WireTraffic | undefined) ?? NO_TRAFFIC;
    const cells: (number | null)[] = [
      m.version,
      m.closedAt,
      m.participants,
      m.contributors,
      m.trainLoss,
      m.testLoss,
      m.testAccuracy,
      m.bytesUp,
      m.bytesDown,
      m.cumulativeBytesUp,
      m.cumulativeBytesDown,
      round.gradientUp,
      round.controlUp,
      round.modelDown,
      round.controlDown,
      uplinkBytes(cumulative),
      downlinkBytes(cumulative),
      totalBytes(cumulative),
      m.durations.totalMs,
      m.durations.collectMs,
      m.durations.decodeMs,
      m.durations.updateMs,
      m.durations.evalMs,
    ];
    for (let layer = 0; layer < layerCount; layer++) {
      const v = m.layers[layer];
      cells.push(v?.closedForm ?? null, v?.realised ?? null, v?.gradientNormSq ?? null, v?.indicator ?? null, v?.bytes ?? null);
    }
    return cells.map((cell) => (cell === null ? '' : String(cell))).join(',');
  });
  return [header.join(','), ...rows].join('\n') + '\n';
}

/** Whether model version `trained` (after the update) is evaluated: every K rounds and at the last. */
export function isEvaluationRound(trained: ModelVersion, evalEvery: number, maxRounds: number): boolean {
  return trained % evalEvery === 0 || trained === maxRounds;
}
