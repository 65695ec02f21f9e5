/**
 * What a worker tab shows: its identity, backend, phase, the run's progress
 * and its own per-round history. Results only; the session (client/session)
 * writes through the actions, components read slices.
 */
import { createStore } from 'zustand/vanilla';
import type { ModelKind } from '../../../core/model';
import type {
  DownlinkChoice,
  DownlinkMetrics,
  DownlinkMode,
  LayerSentAs,
  ModelDelivery,
  RunConfig,
  RunId,
  WorkerId,
} from '../../../core/protocol';
import { NO_TRAFFIC, type WireTraffic } from '../../../core/traffic/frames';
import type { CpuReason } from '../../gpu/runtime/device';
import type { LocalMessage } from '../../i18n';
import type { LinkState } from '../../net/workerChannel';
import { emptySeries, pushPoint, type Series } from './series';

/**
 * Points kept in the tab's own history: half the dashboard's, since the tab
 * redraws four charts while it trains and their work grows with the
 * points (docs/design.md, "The tab's threads").
 */
const HISTORY_POINTS = 120;

/** The backend as the badge shows it. */
export type BackendView =
  | { readonly kind: 'probing' }
  | {
      readonly kind: 'webgpu';
      readonly adapterName: string;
      /** A software adapter (SwiftShader, or one the browser marks isFallbackAdapter): WebGPU without a GPU. */
      readonly software: boolean;
    }
  | {
      readonly kind: 'cpu';
      /** In English, for the server's workers table. */
      readonly reason: string;
      /** What the page translates: the reason's kind and its variable part (an error message). */
      readonly code: CpuReason | 'lost' | 'failed' | 'calibrated' | 'unknown';
      readonly detail?: string;
    };

/** Timing both backends at join to train on the faster (client/session/calibration.ts), as the badge shows it. */
export type CalibrationView =
  | { readonly state: 'measuring'; readonly done: number; readonly total: number }
  | { readonly state: 'done'; readonly webgpuMs: number; readonly cpuMs: number; readonly choice: 'webgpu' | 'cpu' }
  /** `?webgpu` in the page address: WebGPU without timing the CPU. */
  | { readonly state: 'forced' };

/** What the tab is doing now; drives the progress indicator. */
export type WorkerPhase =
  | 'starting' // choosing the backend, loading the digits
  | 'joining'
  | 'calibrating' // timing rounds on WebGPU and on the CPU
  | 'waiting' // joined, waiting for the next round to open
  | 'downloading' // round opened: decoding the model
  | 'computing' // forward/backward and compression
  | 'uploading'
  | 'paused'
  | 'removed'
  | 'failed';

/**
 * One layer of this worker's latest gradient: how it was sent and what it measured (docs/design.md, "Which atoms suit a
 * layer").
 */
export interface WorkerLayerView {
  /** The tensor's name in the model layout, e.g. 'dense1.weight'. */
  readonly name: string;
  readonly shape: readonly [number, number];
  /** Bytes of its encoded message this round. */
  readonly bytes: number;
  /** The decomposition it travelled in, 'dense' for float32; null for a scheme that is not ATOMO. */
  readonly sentAs: LayerSentAs | null;
  /**
   * ‖G‖_*·√(m+n)/‖g‖₁ of its gradient, as last measured, and the round of that measurement (null before
   * any).
   */
  readonly indicator: number | null;
  readonly indicatorRound: number | null;
}

/** One round of this worker, as the charts plot it. */
export interface WorkerRoundPoint {
  readonly round: number;
  readonly loss: number;
  /** Bytes sent, and what float32 would have cost for the same model. */
  readonly bytes: number;
  readonly denseBytes: number;
  /** Σ closed-form variance / Σ ‖g‖², and the realised one, over all layers. */
  readonly closedRel: number;
  readonly realisedRel: number;
  readonly computeMs: number;
  readonly compressMs: number;
  readonly uploadMs: number;
  /** Its layers this round (the split of its bytes, their indicators where measured). */
  readonly layers?: readonly WorkerLayerView[];
}

/** How the model reaches this tab (docs/protocol.md, "Downlink"), as the session saw it. */
export interface DownlinkView {
  /** The run's downlink setting. */
  readonly mode: DownlinkMode;
  /** How the latest round:open came, and its payload bytes. */
  readonly delivery: ModelDelivery;
  /** The model version it brought, and the replica's modelHash then (null: a full model, no replica kept). */
  readonly version: number;
  readonly hash: string | null;
  readonly bytes: number;
  /** Rounds whose replica matched the server's hash, and hash checks that failed (each cost a sync). */
  readonly verified: number;
  readonly resyncs: number;
  /**
   * `atomo`: the latest round's added variance of the compressed update, relative (Σ closed form / Σ‖u‖²); null
   * otherwise.
   */
  readonly closedRel: number | null;
  /** `auto`: the latest closed round's deliveries and what it weighed (RoundMetrics.downlink); null otherwise. */
  readonly choice: {
    readonly version: number;
    readonly downlink: Pick<DownlinkMetrics, 'update' | 'sync' | 'full'>;
    readonly choice: DownlinkChoice;
  } | null;
}

/** A digit of the shard and what the current model says it is. */
export interface DigitView {
  /** 784 pixel bytes. */
  readonly pixels: Uint8Array;
  readonly label: number;
  readonly prediction: number | null;
}

/** The whole worker view. */
export interface WorkerState {
  readonly link: LinkState;
  readonly backend: BackendView;
  /** Null until (and unless) the tab times its backends. */
  readonly calibration: CalibrationView | null;
  readonly phase: WorkerPhase;
  readonly workerId: WorkerId | null;
  readonly runId: RunId | null;
  readonly config: RunConfig | null;
  readonly shard: number | null;
  /** Latest model version the run opened a round for. */
  readonly round: number | null;
  /** Latest held-out accuracy of the run. */
  readonly testAccuracy: number | null;
  /** This worker's bytes sent since the tab opened, and rounds counted. */
  readonly bytesUp: number;
  /** Every frame this tab sent and received, as it counted them itself. */
  readonly traffic: WireTraffic;
  readonly roundsSent: number;
  readonly history: Series<WorkerRoundPoint>;
  /** The layers of the latest round sent, each with the latest indicator measured. */
  readonly layers: readonly WorkerLayerView[];
  readonly digits: readonly DigitView[];
  /** The latest thing that went wrong, in words; null when all is well. */
  readonly notice: LocalMessage | null;
  /** The latest global model, for the drawing card's predictions. */
  readonly model: GlobalModel | null;
  /** How the model reaches this tab; null before the first round. */
  readonly downlink: DownlinkView | null;
}

/** The writes the session makes. */
export interface WorkerActions {
  setLink(link: LinkState): void;
  setBackend(backend: BackendView): void;
  setCalibration(calibration: CalibrationView): void;
  setPhase(phase: WorkerPhase): void;
  assigned(assignment: { workerId: WorkerId; runId: RunId; config: RunConfig; shard: number }): void;
  roundOpened(version: number): void;
  runEvaluated(testAccuracy: number): void;
  roundSent(point: WorkerRoundPoint): void;
  setDigits(digits: readonly DigitView[]): void;
  setNotice(notice: LocalMessage | null): void;
  /** The channel's own count of frames both ways. */
  setTraffic(traffic: WireTraffic): void;
  /** The global model of the latest round (a tab draws with it; headless workers need not keep it). */
  setModel?(model: GlobalModel): void;
  /** How the latest model arrived (headless workers need not keep it). */
  setDownlink?(downlink: DownlinkView): void;
}

/** The run's current global model, as the last round:open sent it. */
export interface GlobalModel {
  readonly kind: ModelKind;
  readonly weights: Float32Array;
  readonly version: number;
}

const initialState: WorkerState = {
  link: 'connecting',
  backend: { kind: 'probing' },
  calibration: null,
  phase: 'starting',
  workerId: null,
  runId: null,
  config: null,
  shard: null,
  round: null,
  testAccuracy: null,
  bytesUp: 0,
  traffic: NO_TRAFFIC,
  roundsSent: 0,
  history: emptySeries(),
  layers: [],
  digits: [],
  notice: null,
  model: null,
  downlink: null,
};

/** Creates a worker store (one per tab; tests make their own). */
export function createWorkerStore() {
  return createStore<WorkerState & WorkerActions>()((set) => ({
    ...initialState,
    setLink: (link) => set({ link }),
    setBackend: (backend) => set({ backend }),
    setCalibration: (calibration) => set({ calibration }),
    setPhase: (phase) => set({ phase }),
    assigned: ({ workerId, runId, config, shard }) =>
      set((state) => ({
        workerId,
        runId,
        config,
        shard,
        // Another run's curves would mislead: a move starts the charts afresh.
        ...(state.runId === runId
          ? {}
          : { history: emptySeries<WorkerRoundPoint>(), layers: [], testAccuracy: null, round: null }),
      })),
    roundOpened: (round) => set({ round }),
    runEvaluated: (testAccuracy) => set({ testAccuracy }),
    roundSent: (point) =>
      set((state) => ({
        bytesUp: state.bytesUp + point.bytes,
        roundsSent: state.roundsSent + 1,
        history: pushPoint(state.history, point, HISTORY_POINTS),
        // A layer not measured this round keeps the indicator it had.
        layers:
          point.layers?.map((layer, l) =>
            layer.indicator === null && state.layers[l]?.name === layer.name
              ? { ...layer, indicator: state.layers[l]!.indicator, indicatorRound: state.layers[l]!.indicatorRound }
              : layer,
          ) ?? state.layers,
      })),
    setDigits: (digits) => set({ digits }),
    setNotice: (notice) => set({ notice }),
    setTraffic: (traffic) => set({ traffic }),
    setModel: (model) => set({ model }),
    setDownlink: (downlink) => set({ downlink }),
  }));
}

/** The store type, for props and the session. */
export type WorkerStore = ReturnType<typeof createWorkerStore>;

/** This tab's worker store. */
export const workerStore: WorkerStore = createWorkerStore();
