/**
 * A worker from start to finish: picks the backend, loads the digits,
 * claims an identity, and then for every round:open decodes the model,
 * trains and compresses on the backend, submits the gradient and reports the
 * result to its sink. Nothing here touches the DOM, the page or a socket:
 * the host passes in the backend, the data, the identity store and the
 * channel factory, so the same session runs in a tab (browserSession.ts),
 * in a Web Worker and in a Node worker thread (`npm run swarm`).
 */
import { modelVariance } from '../../core/atomo';
import { denseBytes, messageDecomposition } from '../../core/codec';
import { DEFAULT_DATASET, type DatasetName, type MnistData } from '../../core/data';
import { createModelLayout, heInitialize } from '../../core/model';
import {
  roundOpenBytes,
  type ProtocolErrorCode,
  type RoundOpen,
  type RunConfig,
  type RunId,
  type WorkerAssignment,
  type WorkerBackend,
} from '../../core/protocol';
import { updateVariance } from '../../core/atomo/variance';
import { ModelReplica } from '../../core/training/replica';
import { shardIndices } from '../../core/training/shard';
import { isSoftwareAdapter } from '../gpu/runtime/adapter';
import type { Backend, GpuContext } from '../gpu/runtime/device';
import { linkedChannelFactory } from '../net/linkChannel';
import type { ChannelFactory } from '../net/workerChannel';
import type { IdentityStore } from '../net/workerIdentity';
import type { DownlinkView, WorkerActions, WorkerPhase } from '../ui/store/workerStore';
import { sampleDigits, type DigitSample } from './digits';
import { calibrateBackends, type Calibration } from './calibration';
import { createTrainer, type ComputeDevice, type Trainer, type TrainerOptions } from './trainer';

/** What the page can ask of the session. */
export interface WorkerControls {
  /** Stop taking part in rounds (the identity and the charts stay). */
  pause(): void;
  /** Take part again (or join again after being removed). */
  resume(): void;
}

/** A running session: its controls, and the way to end it. */
export interface WorkerSession extends WorkerControls {
  /** Closes the channel and frees the trainer. */
  close(): void;
}

/**
 * Where the session reports: the worker store's actions in a tab, a message port from a Web Worker, counters headless.
 */
export type WorkerSessionSink = WorkerActions;

/** A sink that records nothing: headless hosts spread it and override what they count. */
export function quietSink(): WorkerSessionSink {
  const nothing = () => {};
  return {
    setLink: nothing,
    setBackend: nothing,
    setCalibration: nothing,
    setPhase: nothing,
    assigned: nothing,
    roundOpened: nothing,
    runEvaluated: nothing,
    roundSent: nothing,
    setDigits: nothing,
    setNotice: nothing,
    setTraffic: nothing,
  };
}

/** Everything a host injects into a session. */
export interface WorkerSessionDeps {
  readonly sink: WorkerSessionSink;
  /** Picks the compute backend (chooseBackend in a tab, a Dawn device or the CPU in Node). */
  readonly backend: () => Promise<Backend>;
  /**
   * With a WebGPU backend, time a few rounds on it and on the CPU for each
   * new model and compression setting, and train on the faster
   * (calibration.ts); off by default. A tab calibrates unless `?webgpu`
   * forces WebGPU.
   */
  readonly calibrate?: boolean;
  /**
   * Loads a dataset's training images (fetch in a tab, the file system in Node): MNIST at the start, another the first
   * time a run assigns it.
   */
  readonly loadData: (dataset: DatasetName) => Promise<MnistData>;
  /** The worker's identity store (claimWorkerIdentity in a tab, memoryIdentity headless). */
  readonly identity: () => Promise<IdentityStore>;
  /** Opens the connection to the aggregator. */
  readonly openChannel: ChannelFactory;
  /** A name the teacher sees (at most 40 characters). */
  readonly name: string;
  /** Run to join first (`?run=`); the default run when absent. */
  readonly runId?: RunId;
  /** Predict the shown digits after every round (a tab shows them; headless workers skip the work). */
  readonly showDigits?: boolean;
  /**
   * Wait out the run's simulated link (RunConfig.link) before a message counts
   * as delivered; true by default. The swarm turns it off and computes the
   * same time model from measured times instead of sleeping.
   */
  readonly simulateLink?: boolean;
}

/** Refusals that only mean "too late for this round": the next round:open follows. */
const ROUND_RACES: ReadonlySet<ProtocolErrorCode | 'timeout' | 'disconnected'> = new Set([
  'stale-version',
  'future-version',
  'not-participant',
  'round-closed',
  'duplicate',
  'wrong-run',
  'disconnected',
]);

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** SwiftShader, or an adapter the browser marks as a fallback (a CPU implementation of WebGPU). */
function isSoftware(ctx: GpuContext): boolean {
  return (
    isSoftwareAdapter(ctx.device) ||
    (ctx.adapterInfo as GPUAdapterInfo & { isFallbackAdapter?: boolean }).isFallbackAdapter === true
  );
}

function adapterName(info: GPUAdapterInfo): string {
  return info.description || [info.vendor, info.architecture].filter(Boolean).join(' ') || 'unnamed adapter';
}

/** The settings a round's time depends on: a calibration holds for every run that shares them. */
function calibrationKey(config: RunConfig): string {
  const { model, batchSize, scheme, budget, levels, bucketSize, errorFeedback } = config;
  return JSON.stringify([model, batchSize, scheme, budget, levels, bucketSize, errorFeedback === true]);
}

/** The per-assignment state: its trainer and digits, rebuilt when the run, config or shard changes. */
interface Assigned {
  readonly key: string;
  readonly assignment: WorkerAssignment;
  readonly trainer: Trainer;
  readonly digits: DigitSample;
  readonly denseBytes: number;
  /** The run's model as this worker keeps it (core/training/replica.ts). */
  readonly replica: ModelReplica;
}

/** Starts a worker session with what its host injects. */
export async function runWorkerSession(deps: WorkerSessionDeps): Promise<WorkerSession> {
  const { sink, runId } = deps;
  const showDigits = deps.showDigits ?? true;
  const state = () => sink;
  let phase: WorkerPhase = 'starting';
  const setPhase = (next: WorkerPhase) => {
    phase = next;
    sink.setPhase(next);
  };
  setPhase('starting');
  const chosen = await deps.backend();
  let device: ComputeDevice = chosen.kind === 'webgpu' ? { kind: 'webgpu', ctx: chosen.ctx } : { kind: 'cpu' };
  // The WebGPU device while it works, whichever backend trains: a later setting may be calibrated again.
  let gpu: GpuContext | null = chosen.kind === 'webgpu' ? chosen.ctx : null;
  let backendView: WorkerBackend =
    chosen.kind === 'webgpu'
      ? { kind: 'webgpu', detail: adapterName(chosen.ctx.adapterInfo) }
      : { kind: 'cpu', detail: chosen.reason };
  const showWebgpu = (ctx: GpuContext) =>
    sink.setBackend({ kind: 'webgpu', adapterName: adapterName(ctx.adapterInfo), software: isSoftware(ctx) });
  if (chosen.kind === 'webgpu') showWebgpu(chosen.ctx);
  else sink.setBackend({ ...chosen, code: chosen.code ?? 'unknown', detail: chosen.reason });

  let data: MnistData;
  try {
    data = await deps.loadData(DEFAULT_DATASET);
  } catch (error) {
    setPhase('failed');
    sink.setNotice({ key: 'worker.notice.digitsFailed', params: { detail: errorText(error) } });
    return { pause() {}, resume() {}, close() {} };
  }
  // Each dataset is loaded once, when a run first needs it.
  const datasets = new Map<DatasetName, MnistData>([[DEFAULT_DATASET, data]]);
  const dataOf = (assignment: WorkerAssignment): MnistData => datasets.get(assignment.config.dataset) ?? data;

  let participating = true;
  let current: Assigned | null = null;
  let pending: RoundOpen | null = null;
  let busy = false;

  const fallBackToCpu = (code: 'lost' | 'failed', detail: string) => {
    gpu = null;
    // Already on the CPU by calibration: nothing to move, only no more GPU to time.
    if (device.kind === 'cpu') return;
    device = { kind: 'cpu' };
    const reason =
      code === 'lost'
        ? `The WebGPU device was lost (${detail}); training on the CPU.`
        : `WebGPU training failed (${detail}); training on the CPU.`;
    backendView = { kind: 'cpu', detail: reason };
    state().setBackend({ kind: 'cpu', code, detail, reason });
    if (current !== null) {
      current.trainer.dispose();
      current = { ...current, key: '', trainer: createTrainer({ ...trainerInputs(current.assignment), device }) };
    }
  };
  if (chosen.kind === 'webgpu') {
    void chosen.ctx.lost.then((info) => {
      if (info.reason !== 'destroyed') fallBackToCpu('lost', info.message || info.reason);
    });
  }

  const trainerInputs = (assignment: WorkerAssignment): Omit<TrainerOptions, 'device'> => ({
    config: assignment.config,
    slot: assignment.slot,
    train: dataOf(assignment).train,
    shard: shardIndices(
      dataOf(assignment).train.labels,
      { split: assignment.config.split, shards: assignment.config.shards, seed: assignment.config.seed },
      assignment.shard,
    ),
  });

  // Calibrations made, per calibrationKey: a worker moved back and forth between runs times each setting once.
  const calibrations = new Map<string, Calibration>();
  const trainOn = (choice: Calibration['choice'], ctx: GpuContext, times: Calibration) => {
    const calibration = { webgpuMs: times.webgpuMs, cpuMs: times.cpuMs };
    let next: WorkerBackend;
    if (choice === 'webgpu') {
      device = { kind: 'webgpu', ctx };
      next = { kind: 'webgpu', detail: adapterName(ctx.adapterInfo), calibration };
      showWebgpu(ctx);
    } else {
      device = { kind: 'cpu' };
      const detail = adapterName(ctx.adapterInfo);
      const reason = `The CPU was faster than WebGPU (${detail}) on this device.`;
      next = { kind: 'cpu', detail: reason, calibration };
      sink.setBackend({ kind: 'cpu', code: 'calibrated', detail, reason });
    }
    // A new object only for a new report: assign rejoins when the report changed.
    if (JSON.stringify(next) !== JSON.stringify(backendView)) backendView = next;
    sink.setCalibration({ state: 'done', ...times });
  };

  /**
   * Times both backends on this setting's rounds (the first time it is seen) and returns a fresh trainer on the faster.
   */
  const calibratedTrainer = async (inputs: Omit<TrainerOptions, 'device'>, ctx: GpuContext): Promise<Trainer> => {
    const key = calibrationKey(inputs.config);
    const known = calibrations.get(key);
    if (known !== undefined) {
      trainOn(known.choice, ctx, known);
      return createTrainer({ ...inputs, device });
    }
    setPhase('calibrating');
    const onGpu = createTrainer({ ...inputs, device: { kind: 'webgpu', ctx } });
    const onCpu = createTrainer({ ...inputs, device: { kind: 'cpu' } });
    const weights = heInitialize(createModelLayout(inputs.config.model), inputs.config.seed);
    let result: Calibration;
    try {
      result = await calibrateBackends(onGpu, onCpu, weights, {
        now: () => performance.now(),
        onProgress: (done, total) => sink.setCalibration({ state: 'measuring', done, total }),
      });
    } catch (error) {
      onGpu.dispose();
      fallBackToCpu('failed', errorText(error));
      return onCpu.restart();
    }
    calibrations.set(key, result);
    trainOn(result.choice, ctx, result);
    const [winner, loser] = result.choice === 'webgpu' ? [onGpu, onCpu] : [onCpu, onGpu];
    loser.dispose();
    return winner.restart();
  };

  /** Builds the trainer of an assignment (after a calibration, when one is due). */
  const assign = async (assignment: WorkerAssignment) => {
    const key = `${assignment.runId}|${assignment.slot}|${assignment.shard}|${JSON.stringify(assignment.config)}`;
    if (current?.key === key) return;
    current?.trainer.dispose();
    current = null;
    const dataset = assignment.config.dataset;
    if (!datasets.has(dataset)) {
      try {
        datasets.set(dataset, await deps.loadData(dataset));
      } catch (error) {
        sink.setNotice({ key: 'worker.notice.digitsFailed', params: { detail: errorText(error) } });
        return;
      }
    }
    const inputs = trainerInputs(assignment);
    const reported = backendView;
    const trainer =
      deps.calibrate === true && gpu !== null
        ? await calibratedTrainer(inputs, gpu)
        : createTrainer({ ...inputs, device });
    const digits = sampleDigits(inputs.train, inputs.shard);
    current = {
      key,
      assignment,
      trainer,
      digits,
      denseBytes: denseBytes(trainer.layout),
      replica: new ModelReplica(trainer.layout),
    };
    if (showDigits)
      state().setDigits(digits.pixels.map((pixels, i) => ({ pixels, label: digits.labels[i]!, prediction: null })));
    // The join said where this worker computes before it had timed it: a rejoin tells the teacher's table the times and
    // the choice.
    if (backendView !== reported && participating) void channel.join();
  };
  // One assignment at a time (a calibration takes seconds); one overtaken by a newer is skipped.
  let assigning: Promise<void> = Promise.resolve();
  let latestAssignment = 0;

  const train = async (round: RoundOpen, trainer: Trainer, weights: Float32Array) => {
    try {
      return await trainer.round(weights, round.version);
    } catch (error) {
      if (trainer.kind !== 'webgpu') throw error;
      fallBackToCpu('failed', errorText(error));
      return current!.trainer.round(weights, round.version);
    }
  };

  let downlink: DownlinkView | null = null;
  const reportDownlink = (change: Partial<DownlinkView> & Pick<DownlinkView, 'mode'>) => {
    downlink = {
      delivery: 'full',
      version: 0,
      hash: null,
      bytes: 0,
      verified: 0,
      resyncs: 0,
      closedRel: null,
      ...downlink,
      ...change,
    };
    sink.setDownlink?.(downlink);
  };

  const play = async (round: RoundOpen, here: Assigned) => {
    state().roundOpened(round.version);
    setPhase('downloading');
    const received = performance.now();
    const { config } = here.assignment;
    // The replica applies a relayed or compressed update with the server's own function, and checks its hash.
    const outcome = here.replica.receive(round, config);
    const mode = config.downlink ?? 'full';
    const bytes = roundOpenBytes(round);
    if (outcome.kind === 'resync') {
      reportDownlink({
        mode,
        delivery: round.delivery,
        version: round.version,
        hash: null,
        bytes,
        resyncs: (downlink?.resyncs ?? 0) + 1,
      });
      channel.requestModel(round.runId);
      return;
    }
    reportDownlink({
      mode,
      delivery: round.delivery,
      version: round.version,
      hash: outcome.hash,
      bytes,
      verified: (downlink?.verified ?? 0) + (outcome.verified ? 1 : 0),
    });
    const { weights } = outcome;
    const applyMs = performance.now() - received;
    // A copy: the page predicts drawn digits with it while the trainer works on its own.
    sink.setModel?.({ kind: here.assignment.config.model, weights: weights.slice(), version: round.version });
    setPhase('computing');
    const result = await train(round, here.trainer, weights);
    const active = current ?? here;
    if (!participating) return;
    setPhase('uploading');
    const sentAt = performance.now();
    const receipt = await channel.submit({
      runId: round.runId,
      workerId: active.assignment.workerId,
      version: round.version,
      layers: result.layers,
      loss: result.loss,
      layerStats: result.layerStats,
      // The replica's update is this worker's work too: it counts toward the round's time.
      computeMs: result.computeMs + result.compressMs + applyMs,
    });
    const uploadMs = performance.now() - sentAt;
    state().setTraffic(channel.traffic);
    if (receipt.ok) {
      const { closedRel, realisedRel } = modelVariance(result.layerStats);
      state().roundSent({
        round: round.version,
        loss: result.loss,
        bytes: receipt.bytes,
        denseBytes: active.denseBytes,
        closedRel,
        realisedRel,
        computeMs: result.computeMs,
        compressMs: result.compressMs,
        uploadMs,
        layers: active.trainer.layout.tensors.map((tensor, l) => {
          const indicator = result.layerStats[l]?.indicator ?? null;
          const bytes = result.layers[l]!;
          return {
            name: tensor.name,
            shape: tensor.shape,
            bytes: bytes.length,
            sentAs: messageDecomposition(bytes),
            indicator,
            indicatorRound: indicator === null ? null : round.version,
          };
        }),
      });
      state().setNotice(null);
    } else if (!ROUND_RACES.has(receipt.error.code)) {
      state().setNotice({
        key: 'worker.notice.refused',
        params: { round: round.version, detail: receipt.error.message },
      });
    }
    if (!showDigits) return;
    const { digits } = active;
    const predictions = await active.trainer.predict(weights, digits.images, digits.count);
    state().setDigits(
      digits.pixels.map((pixels, i) => ({ pixels, label: digits.labels[i]!, prediction: predictions[i]! })),
    );
  };

  const pump = async () => {
    if (busy) return;
    busy = true;
    try {
      // The server may open a round before the join's answer arrives: such a round waits here for its assignment.
      while (pending !== null && current !== null && participating) {
        const round = pending;
        const here = current;
        if (round.runId !== here.assignment.runId) break;
        pending = null;
        try {
          await play(round, here);
        } catch (error) {
          state().setNotice({
            key: 'worker.notice.roundFailed',
            params: { round: round.version, detail: errorText(error) },
          });
        }
      }
    } finally {
      busy = false;
      if (participating && phase !== 'removed' && phase !== 'failed' && phase !== 'calibrating') setPhase('waiting');
    }
  };

  const identity = await deps.identity();
  setPhase('joining');
  const openChannel =
    deps.simulateLink === false
      ? deps.openChannel
      : linkedChannelFactory(deps.openChannel, () => current?.assignment.config.link ?? null);
  const channel = openChannel({
    identity,
    name: deps.name,
    // Read at every join, so a worker that fell back to the CPU says so when it next rejoins.
    backend: () => backendView,
    ...(runId === undefined ? {} : { runId }),
    listener: {
      onLink: (link) => state().setLink(link),
      onAssigned: (assignment) => {
        state().assigned(assignment);
        if (pending !== null && pending.runId !== assignment.runId) pending = null;
        const ticket = ++latestAssignment;
        assigning = assigning.then(async () => {
          if (ticket !== latestAssignment) return;
          try {
            await assign(assignment);
          } catch (error) {
            state().setNotice({ key: 'common.raw', params: { detail: errorText(error) } });
          }
          if (participating && !busy && phase !== 'removed') setPhase('waiting');
          void pump();
        });
      },
      onRoundOpen: (round) => {
        if (!participating) return;
        pending = round;
        void pump();
      },
      onRoundClosed: () => {},
      onMetrics: (metrics) => {
        if (current === null || metrics.runId !== current.assignment.runId) return;
        if (metrics.testAccuracy !== null) state().runEvaluated(metrics.testAccuracy);
        if (metrics.downlink !== undefined && metrics.downlink.mode === 'atomo') {
          reportDownlink({ mode: 'atomo', closedRel: updateVariance(metrics.downlink.layers).closedRel });
        }
      },
      onRemoved: (reason) => {
        participating = false;
        pending = null;
        setPhase('removed');
        state().setNotice({ key: 'worker.notice.removed', params: { detail: reason } });
      },
      onError: (error) => {
        if (ROUND_RACES.has(error.code)) return;
        if (error.code === 'too-many-workers') return state().setNotice({ key: 'worker.notice.tooManyWorkers' });
        state().setNotice({ key: 'common.raw', params: { detail: error.message } });
      },
    },
  });

  return {
    pause() {
      participating = false;
      pending = null;
      channel.leave();
      setPhase('paused');
    },
    resume() {
      participating = true;
      state().setNotice(null);
      setPhase('joining');
      void channel.join().then((joined) => {
        if (joined && !busy) setPhase('waiting');
      });
    },
    close() {
      participating = false;
      pending = null;
      channel.close();
      current?.trainer.dispose();
      current = null;
    },
  };
}
