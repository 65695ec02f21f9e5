/**
 * What the teacher dashboard shows: every run's summary and its downsampled
 * history, kept as chart-ready points (never the raw RoundMetrics, whose
 * per-worker arrays would grow with the class). Fed by client/net's
 * dashboard channel; components read slices.
 */
import type { LocalMessage } from '../../i18n';
import { createStore } from 'zustand/vanilla';
import { modelVariance } from '../../../core/atomo';
import { updateVariance } from '../../../core/atomo/variance';
import type { DownlinkMetrics, LayerSentAs, RoundMetrics, RunId, RunSummary } from '../../../core/protocol';
import { downlinkBytes, totalBytes, uplinkBytes } from '../../../core/traffic/frames';
import { pushPoint, seriesOf, type Series } from './series';
import { START_CLOCK, clocksOf, tick, type LinkPresetKey, type SimulatedClock } from './simulatedTime';
import type { DashboardAuth, DashboardLink, DashboardSink } from '../../net/dashboardChannel';

/** One closed round of a run, as the overlay charts plot it. */
export interface RunRoundPoint {
  readonly round: number;
  readonly trainLoss: number;
  readonly bytesUp: number;
  readonly cumulativeMB: number;
  /** Σ closed-form variance / Σ ‖g‖² over layers (0 for uncompressed). */
  readonly varianceRel: number;
  readonly realisedRel: number;
  /** The `atomo` downlink's closed-form variance ÷ ‖u‖² of the compressed update (0 for the other downlinks). */
  readonly downlinkVarianceRel: number;
}

/** One evaluation of a run on the held-out digits. */
export interface RunEvalPoint {
  readonly round: number;
  readonly accuracy: number;
  readonly testLoss: number;
  /** Cumulative megabytes on the wire (every frame, core/traffic): worker → server, server → worker, both. */
  readonly uplinkMB: number;
  readonly downlinkMB: number;
  readonly totalMB: number;
  /** Cumulative simulated seconds of the run's rounds by then under each link preset (./simulatedTime.ts). */
  readonly simulatedS: Readonly<Record<LinkPresetKey, number>>;
}

/** One closed round of a run, layer by layer (docs/design.md, "Which atoms suit a layer"). */
export interface RunLayersPoint {
  readonly round: number;
  /** Mean indicator ‖G‖_*·√(m+n)/‖g‖₁ per layer over the workers that measured it; null where none did. */
  readonly indicator: readonly (number | null)[];
  /** The decomposition most of the round's workers sent each layer in; null for a scheme that is not ATOMO. */
  readonly sentAs: readonly (LayerSentAs | null)[];
}

/**
 * A run's layers over every closed round (exact, not downsampled): the split of its bytes and how each layer travelled.
 */
export interface RunLayerTotals {
  /** Σ over rounds of the mean bytes per worker of each layer. */
  readonly bytes: readonly number[];
  /** Worker-rounds each layer was sent in each decomposition. */
  readonly sentAs: readonly Partial<Record<LayerSentAs, number>>[];
  /** The latest indicator measured per layer (null before any). */
  readonly lastIndicator: readonly (number | null)[];
}

/** Which traffic the trade-off chart's x axis counts. */
export type TrafficAxis = 'uplinkMB' | 'downlinkMB' | 'totalMB';

/** A run as the dashboard holds it. */
export interface RunView {
  readonly summary: RunSummary;
  readonly rounds: Series<RunRoundPoint>;
  readonly evals: Series<RunEvalPoint>;
  /** Rounds closed and their summed upstream bytes, for the mean bytes per round (exact, not downsampled). */
  readonly roundsClosed: number;
  readonly bytesUpTotal: number;
  /** Gradients received over those rounds: bytesUpTotal / contributions is the bytes of one worker's round. */
  readonly contributions: number;
  /**
   * Model bytes sent over those rounds and to how many participants: bytesDownTotal / participations is one worker's
   * download.
   */
  readonly bytesDownTotal: number;
  readonly participations: number;
  readonly layers: Series<RunLayersPoint>;
  readonly layerTotals: RunLayerTotals;
  /** Every closed round's simulated time under each link preset, summed (exact, not downsampled). */
  readonly clock: SimulatedClock;
  /** How the model went down in the latest closed round, and its version (null before any, or in old histories). */
  readonly lastDownlink: { readonly version: number; readonly downlink: DownlinkMetrics } | null;
}

/** The last round each worker contributed to, for the workers table. */
export interface WorkerLastRound {
  readonly runId: RunId;
  readonly round: number;
  readonly bytesUp: number;
  readonly computeMs: number;
}

/** The whole dashboard view. */
export interface DashboardState {
  readonly link: DashboardLink;
  readonly auth: DashboardAuth;
  /** Runs in creation order (the server's list order). */
  readonly runIds: readonly RunId[];
  readonly runs: Readonly<Record<string, RunView>>;
  readonly lastRounds: Readonly<Record<number, WorkerLastRound>>;
  /** The latest message for the teacher (a refused action), or null. */
  readonly notice: LocalMessage | null;
}

/** The writes the dashboard channel makes (client/net defines them; this store implements them). */
export type DashboardActions = DashboardSink;

function roundPoint(m: RoundMetrics): RunRoundPoint {
  const variance = modelVariance(m.layers);
  return {
    round: m.version + 1,
    trainLoss: m.trainLoss,
    bytesUp: m.bytesUp,
    cumulativeMB: m.cumulativeBytesUp / 1e6,
    varianceRel: variance.closedRel,
    realisedRel: variance.realisedRel,
    downlinkVarianceRel: m.downlink === undefined ? 0 : updateVariance(m.downlink.layers).closedRel,
  };
}

function evalPoint(m: RoundMetrics, clock: SimulatedClock): RunEvalPoint | null {
  if (m.testAccuracy === null) return null;
  // Histories recorded before frames were counted have no traffic: fall back to the payload bytes.
  const wire = m.cumulativeTraffic as RoundMetrics['cumulativeTraffic'] | undefined;
  return {
    round: m.version + 1,
    accuracy: m.testAccuracy,
    testLoss: m.testLoss ?? Number.NaN,
    uplinkMB: (wire === undefined ? m.cumulativeBytesUp : uplinkBytes(wire)) / 1e6,
    downlinkMB: (wire === undefined ? m.cumulativeBytesDown : downlinkBytes(wire)) / 1e6,
    totalMB: (wire === undefined ? m.cumulativeBytesUp + m.cumulativeBytesDown : totalBytes(wire)) / 1e6,
    simulatedS: clock.seconds,
  };
}

/** The majority decomposition of one layer's round (ties: the first in the record), or null. */
function majority(counts: Partial<Record<LayerSentAs, number>> | undefined): LayerSentAs | null {
  let best: LayerSentAs | null = null;
  let most = 0;
  for (const [kind, n] of Object.entries(counts ?? {}) as [LayerSentAs, number][]) {
    if (n > most) {
      best = kind;
      most = n;
    }
  }
  return best;
}

function layersPoint(m: RoundMetrics): RunLayersPoint {
  return {
    round: m.version + 1,
    indicator: m.layers.map((l) => l.indicator ?? null),
    sentAs: m.layers.map((l) => majority(l.sentAs)),
  };
}

const NO_LAYERS: RunLayerTotals = { bytes: [], sentAs: [], lastIndicator: [] };

function addLayers(totals: RunLayerTotals, m: RoundMetrics): RunLayerTotals {
  return {
    bytes: m.layers.map((l, i) => (totals.bytes[i] ?? 0) + (l.bytes ?? 0)),
    sentAs: m.layers.map((l, i) => {
      const sum: Partial<Record<LayerSentAs, number>> = { ...totals.sentAs[i] };
      for (const [kind, n] of Object.entries(l.sentAs ?? {}) as [LayerSentAs, number][])
        sum[kind] = (sum[kind] ?? 0) + n;
      return sum;
    }),
    lastIndicator: m.layers.map((l, i) => l.indicator ?? totals.lastIndicator[i] ?? null),
  };
}

function viewOf(summary: RunSummary, history: readonly RoundMetrics[]): RunView {
  const clocks = clocksOf(history);
  const evals = history.map((m, i) => evalPoint(m, clocks[i]!)).filter((p): p is RunEvalPoint => p !== null);
  return {
    layers: seriesOf(history.map(layersPoint)),
    layerTotals: history.reduce(addLayers, NO_LAYERS),
    summary,
    rounds: seriesOf(history.map(roundPoint)),
    evals: seriesOf(evals),
    roundsClosed: history.length,
    bytesUpTotal: history.reduce((sum, m) => sum + m.bytesUp, 0),
    contributions: history.reduce((sum, m) => sum + m.contributors, 0),
    bytesDownTotal: history.reduce((sum, m) => sum + m.bytesDown, 0),
    participations: history.reduce((sum, m) => sum + m.participants, 0),
    clock: clocks.at(-1) ?? START_CLOCK,
    lastDownlink: history.reduce(lastDownlinkOf, null),
  };
}

/** The latest round's downlink record: `m`'s when it has one, else the one before. */
function lastDownlinkOf(previous: RunView['lastDownlink'], m: RoundMetrics): RunView['lastDownlink'] {
  return m.downlink === undefined ? previous : { version: m.version, downlink: m.downlink };
}

function workersOf(history: readonly RoundMetrics[], into: Record<number, WorkerLastRound>): void {
  for (const m of history) {
    for (const w of m.workers)
      into[w.workerId] = { runId: m.runId, round: m.version, bytesUp: w.bytesUp, computeMs: w.computeMs };
  }
}

/** Creates a dashboard store (one per page; tests make their own). */
export function createDashboardStore() {
  return createStore<DashboardState & DashboardActions>()((set) => ({
    link: 'connecting',
    auth: 'viewer',
    runIds: [],
    runs: {},
    lastRounds: {},
    notice: null,
    setLink: (link) => set({ link }),
    setAuth: (auth) => set({ auth }),
    snapshot: (summaries, history) => {
      const runs: Record<string, RunView> = {};
      const lastRounds: Record<number, WorkerLastRound> = {};
      for (const summary of summaries) {
        const past = history[summary.runId] ?? [];
        runs[summary.runId] = viewOf(summary, past);
        workersOf(past, lastRounds);
      }
      set({ runs, runIds: summaries.map((s) => s.runId), lastRounds });
    },
    runState: (summary) =>
      set((state) => {
        const existing = state.runs[summary.runId];
        // A reset run starts at version 0 with an empty history: drop the old curves with it.
        const reset = existing !== undefined && summary.version === 0 && existing.roundsClosed > 0;
        const view = existing === undefined || reset ? viewOf(summary, []) : { ...existing, summary };
        return {
          runs: { ...state.runs, [summary.runId]: view },
          runIds: state.runIds.includes(summary.runId) ? state.runIds : [...state.runIds, summary.runId],
        };
      }),
    runDeleted: (runId) =>
      set((state) => {
        const runs = { ...state.runs };
        delete runs[runId];
        return { runs, runIds: state.runIds.filter((id) => id !== runId) };
      }),
    metrics: (m) =>
      set((state) => {
        const view = state.runs[m.runId];
        if (view === undefined) return {};
        const clock = tick(view.clock, m);
        const point = evalPoint(m, clock);
        const lastRounds = { ...state.lastRounds };
        workersOf([m], lastRounds);
        return {
          lastRounds,
          runs: {
            ...state.runs,
            [m.runId]: {
              ...view,
              rounds: pushPoint(view.rounds, roundPoint(m)),
              evals: point === null ? view.evals : pushPoint(view.evals, point),
              roundsClosed: view.roundsClosed + 1,
              bytesUpTotal: view.bytesUpTotal + m.bytesUp,
              contributions: view.contributions + m.contributors,
              bytesDownTotal: view.bytesDownTotal + m.bytesDown,
              participations: view.participations + m.participants,
              layers: pushPoint(view.layers, layersPoint(m)),
              layerTotals: addLayers(view.layerTotals, m),
              clock,
              lastDownlink: lastDownlinkOf(view.lastDownlink, m),
            },
          },
        };
      }),
    setNotice: (notice) => set({ notice }),
  }));
}

/** The store type, for props and the channel. */
export type DashboardStore = ReturnType<typeof createDashboardStore>;

/** This page's dashboard store. */
export const dashboardStore: DashboardStore = createDashboardStore();
