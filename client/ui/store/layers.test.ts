/**
 * The per-layer views of both pages: the dashboard keeps each round's mean
 * indicator and majority decomposition per layer, and exact totals of the
 * split; the tab keeps its latest layers, each with the last indicator measured.
 */
import { describe, expect, it } from 'vitest';
import {
  asModelVersion,
  asRunId,
  type LayerVariance,
  type RoundMetrics,
  type RunSummary,
} from '../../../core/protocol';
import { DEFAULT_RUN_CONFIG } from '../../../core/schema';
import { NO_TRAFFIC } from '../../../core/traffic/frames';
import { createDashboardStore } from './dashboardStore';
import { createWorkerStore, type WorkerLayerView, type WorkerRoundPoint } from './workerStore';

const runId = asRunId('r1');
const summary = {
  runId,
  config: DEFAULT_RUN_CONFIG,
  status: 'running',
  version: asModelVersion(0),
  workers: [],
  round: null,
} as unknown as RunSummary;
const metrics = (version: number, layers: LayerVariance[]): RoundMetrics =>
  ({
    runId,
    version: asModelVersion(version),
    closedAt: version,
    participants: 2,
    contributors: 2,
    trainLoss: 1,
    testLoss: null,
    testAccuracy: null,
    bytesUp: 100,
    bytesDown: 0,
    cumulativeBytesUp: 100 * (version + 1),
    cumulativeBytesDown: 0,
    traffic: NO_TRAFFIC,
    cumulativeTraffic: NO_TRAFFIC,
    layers,
    workers: [],
    durations: { totalMs: 0, collectMs: 0, decodeMs: 0, updateMs: 0, evalMs: 0 },
  }) as RoundMetrics;
const layer = (extra: Partial<LayerVariance>): LayerVariance => ({
  closedForm: 1,
  realised: 1,
  gradientNormSq: 1,
  ...extra,
});

describe('per-layer views', () => {
  it('on the dashboard: each round’s indicator and majority decomposition, and exact totals of the split', () => {
    const store = createDashboardStore();
    store.getState().snapshot([summary], {
      [runId]: [
        metrics(0, [
          layer({ indicator: 0.5, bytes: 80, sentAs: { spectral: 2 } }),
          layer({ bytes: 20, sentAs: { dense: 2 } }),
        ]),
      ],
    });
    store
      .getState()
      .metrics(
        metrics(1, [
          layer({ indicator: null, bytes: 60, sentAs: { entry: 1, spectral: 1 } }),
          layer({ indicator: 2, bytes: 20, sentAs: { dense: 2 } }),
        ]),
      );
    // A round recorded before these fields existed.
    store.getState().metrics(metrics(2, [layer({}), layer({})]));
    const view = store.getState().runs[runId]!;
    expect(view.layers.points.map((p) => p.indicator)).toEqual([
      [0.5, null],
      [null, 2],
      [null, null],
    ]);
    expect(view.layers.points.map((p) => p.sentAs)).toEqual([
      ['spectral', 'dense'],
      ['entry', 'dense'],
      [null, null],
    ]);
    expect(view.layerTotals).toEqual({
      bytes: [140, 40],
      sentAs: [{ spectral: 3, entry: 1 }, { dense: 4 }],
      lastIndicator: [0.5, 2],
    });
  });

  it('on the tab: the latest layers, keeping the last indicator measured where this round measured none', () => {
    const store = createWorkerStore();
    const view = (indicator: number | null, round: number): WorkerLayerView => ({
      name: 'dense1.weight',
      shape: [784, 128],
      bytes: 9000,
      sentAs: 'spectral',
      indicator,
      indicatorRound: indicator === null ? null : round,
    });
    const point = (round: number, layers: WorkerLayerView[]): WorkerRoundPoint => ({
      round,
      loss: 1,
      bytes: 9000,
      denseBytes: 400_000,
      closedRel: 1,
      realisedRel: 1,
      computeMs: 1,
      compressMs: 1,
      uploadMs: 1,
      layers,
    });
    store.getState().roundSent(point(5, [view(0.6, 5)]));
    store.getState().roundSent(point(6, [view(null, 6)]));
    expect(store.getState().layers).toEqual([view(0.6, 5)]);
    store.getState().roundSent(point(10, [view(0.7, 10)]));
    expect(store.getState().layers[0]).toMatchObject({ indicator: 0.7, indicatorRound: 10 });
  });
});
