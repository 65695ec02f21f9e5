/**
 * One round of one worker, the only one in the project: the tab, the Node
 * worker loop (train:local), the headless swarm and the server's simulated
 * workers all call it, so a gradient is the same bytes wherever it is made.
 *
 * For model version v: take round v's minibatch of the worker's shard,
 * compute the loss and the gradient on the backend, compress every layer
 * (on the device when a device compressor is given, its backend can keep
 * the gradient there and it supports the scheme; else on the CPU), encode
 * it with core/codec (dense float32 where the scheme's bytes would be more),
 * and measure what the dashboard shows.
 *
 * Randomness: the minibatch comes from MinibatchSampler(shard, B, seed,
 * worker) and layer l's atoms from stream {seed, worker, round: v, layer: l}.
 */
import type { LayerMemory } from '../atomo';
import type { Compression, LayerSample } from '../atomo/types';
import { encodeForWire } from '../codec';
import { MinibatchSampler, createBatch, type Batch, type Dataset } from '../data';
import type { BackendKind, DeviceTrainingBackend, TrainingBackend } from '../model/backend';
import type { ModelLayout } from '../model/layout';
import type { LayerStats, TimeSource } from '../protocol';
import {
  compressOnCpu,
  layerGradients,
  type CompressedLayerStats,
  type DeviceCompressor,
  type LayerStreams,
} from './compression';

/** Everything fixed for a worker across rounds. */
export interface WorkerRoundOptions<G = unknown> {
  readonly backend: TrainingBackend | DeviceTrainingBackend<G>;
  readonly layout: ModelLayout;
  readonly compression: Compression;
  readonly batchSize: number;
  /** The run seed. */
  readonly seed: number;
  /** The worker's slot in the run: its randomness stream id. */
  readonly worker: number;
  /** The training split and the indices of this worker's shard in it. */
  readonly train: Dataset;
  readonly shard: Uint32Array;
  /** Compresses on the device when the backend keeps its gradient there and this supports the scheme. */
  readonly deviceCompressor?: DeviceCompressor<G>;
  /** The clock of the timings (WALL_CLOCK by default; a thread CPU clock where the host has one). */
  readonly clock?: StepClock;
  /**
   * Measure every layer's indicator on rounds v with v mod this = 0 (INDICATOR_EVERY by default); see INDICATOR_EVERY.
   */
  readonly indicatorEvery?: number;
}

/**
 * How often a worker measures the indicator ‖G‖_*·√(m+n)/‖g‖₁ of a layer
 * whose compression did not find both norms on its way (docs/design.md,
 * "Which atoms suit a layer"): every 5th round. Its singular values cost one
 * factored or small SVD per layer (about 2.5 ms a round for the MLP, 2 ms
 * for the CNN on one core, docs/benchmarks.md), a third of a float32 round's
 * CPU time, and ‖g‖₁ a pass over g. Spectral ATOMO and atomo-auto have the
 * singular values anyway; spectral ATOMO also has ‖g‖₁ on the layers whose
 * SVD reads g, which report every round, but not on its factored route (the
 * MLP's first layer), which reports on these rounds. A round compressed on
 * the GPU reports none.
 */
export const INDICATOR_EVERY = 5;

/**
 * A millisecond clock for a worker's timings and what it measures: `thread-cpu`, the CPU time of the thread the
 * round runs on (the step's own cost, whatever else the machine runs), or `wall`, elapsed time (all a tab has).
 */
export interface StepClock {
  readonly now: () => number;
  readonly source: TimeSource;
}

/**
 * The timer every host of a worker round has (tab, Web Worker, Node); core's lib has no DOM, so it is declared here.
 */
declare const performance: { now(): number };

/** The wall clock: performance.now. */
export const WALL_CLOCK: StepClock = { now: () => performance.now(), source: 'wall' };

/** One worker's contribution to round v. */
export interface WorkerRoundResult {
  readonly version: number;
  /** One encoded layer per parameter tensor, in layout order: what gradient:submit carries. */
  readonly layers: Uint8Array[];
  /** The samples those bytes encode (local training applies them directly). */
  readonly samples: LayerSample[];
  /** Mean minibatch loss of model v. */
  readonly loss: number;
  /** Per layer: closed-form E‖ĝ − g‖², realised ‖ĝ − g‖², ‖g‖². */
  readonly layerStats: LayerStats[];
  /** ‖g‖² over all layers. */
  readonly gradientNormSq: number;
  /** Σ of the layers' byte lengths. */
  readonly bytes: number;
  /** Forward/backward, compression (sampling, statistics and read-back), and encoding time, in ms of `clock`. */
  readonly computeMs: number;
  readonly compressMs: number;
  readonly encodeMs: number;
  /** The clock that measured them. */
  readonly clock: TimeSource;
  /** Where the compression ran: the CPU, or the device of the backend (its kind). */
  readonly compressedOn: BackendKind;
}

/** A worker's round function: model weights of version v → its encoded gradient for round v. */
export type WorkerRound = (weights: Float32Array, version: number) => Promise<WorkerRoundResult>;

function keepsGradientOnDevice<G>(
  backend: TrainingBackend | DeviceTrainingBackend<G>,
): backend is DeviceTrainingBackend<G> {
  return 'computeGradient' in backend && 'settled' in backend;
}

/** Prepares a worker's rounds: its minibatch sampler and reusable batch buffers. */
export function createWorkerRound<G>(options: WorkerRoundOptions<G>): WorkerRound {
  const { backend, layout, compression, batchSize, seed, worker, train } = options;
  const clock = options.clock ?? WALL_CLOCK;
  const now = clock.now;
  const sampler = new MinibatchSampler(options.shard, batchSize, seed, worker);
  const indices = new Uint32Array(batchSize);
  const batch: Batch = createBatch(batchSize);
  const compressor = options.deviceCompressor;
  const onDevice =
    compressor !== undefined &&
    keepsGradientOnDevice(backend) &&
    // Error feedback and byte budgets too, when the compressor handles them (supports says so).
    compressor.supports(compression);
  const device = onDevice ? { backend, compressor } : null;

  // Error feedback and PowerSGD's warm start, per tensor, for the life of this round function (one run, one model);
  // on the device they live in the compressor, under deviceMemory.
  const memories: LayerMemory[] = layout.tensors.map(() => ({}));
  const deviceMemory = {};

  return async (weights, version) => {
    if (weights.length !== layout.parameterCount) {
      throw new RangeError(`worker round: ${weights.length} weights, ${layout.kind} has ${layout.parameterCount}`);
    }
    const stream: LayerStreams = (layer) => ({ seed, worker, round: version, layer });
    const measureIndicator = version % (options.indicatorEvery ?? INDICATOR_EVERY) === 0;
    const started = now();
    train.batch(sampler.batch(version, indices), batch);
    let loss: number;
    let compressed: readonly CompressedLayerStats[];
    let computed: number;
    if (device !== null) {
      const gradient = device.backend.computeGradient(weights, batch.pixels, batch.labels, batchSize);
      // Waiting here costs one sync but splits compute from compression time honestly.
      await device.backend.settled();
      computed = now();
      ({ loss, layers: compressed } = await device.compressor.compress(gradient, compression, stream, deviceMemory));
    } else {
      // The backend may reuse its gradient buffer on the next call; it is consumed before this round returns.
      const result = await backend.lossAndGradient(weights, batch.pixels, batch.labels, batchSize);
      computed = now();
      loss = result.loss;
      compressed = compressOnCpu(layerGradients(layout, result), compression, stream, { memories, measureIndicator });
    }
    const compressedAt = now();
    const layers = compressed.map(({ sample }, layer) => encodeForWire(sample, layer));
    const encoded = now();
    let bytes = 0;
    let gradientNormSq = 0;
    for (const layer of layers) bytes += layer.length;
    for (const layer of compressed) gradientNormSq += layer.gradientNormSq;
    return {
      version,
      layers,
      samples: compressed.map(({ sample }) => sample),
      loss,
      layerStats: compressed.map(({ closedForm, realised, gradientNormSq: normSq, indicator }) =>
        indicator === undefined
          ? { closedForm, realised, gradientNormSq: normSq }
          : { closedForm, realised, gradientNormSq: normSq, indicator },
      ),
      gradientNormSq,
      bytes,
      computeMs: computed - started,
      compressMs: compressedAt - computed,
      encodeMs: encoded - compressedAt,
      clock: clock.source,
      compressedOn: device === null ? 'cpu' : backend.kind,
    };
  };
}
