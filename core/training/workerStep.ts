/**
 * One round of one worker, as pure computation (DESIGN.md §1, left column):
 * take the minibatch of round v from the worker's shard, compute the loss and
 * the gradient of model v with an injected backend, compress each layer with
 * the run's scheme, encode it, and measure what the dashboard shows: loss,
 * per-layer closed-form and realised variance, ‖g‖², and exact bytes.
 *
 * The browser worker loop, the headless swarm and the server's simulated
 * workers all call this, so a gradient is the same bytes wherever it is made.
 * Randomness: the minibatch comes from MinibatchSampler (seed, slot, epoch)
 * and the atoms of layer l from stream {seed, worker: slot, round: v, layer: l}.
 */
import { compressLayer, realisedError, reconstruct, squaredNorm, type LayerMemory } from '../atomo';
import type { SchemeName } from '../atomo/types';
import { encodeLayer } from '../codec';
import { MinibatchSampler, createBatch, type Batch, type Dataset } from '../data';
import type { TrainingBackend } from '../model/backend';
import type { ModelLayout } from '../model/layout';
import type { LayerStats } from '../protocol';
import type { StreamId } from '../rng';


/** The compression of a run: its scheme and that scheme's knob. */
export interface Compression {
  readonly scheme: SchemeName;
  /** ATOMO budget s (atomo-entry, atomo-svd, atomo-dct), PowerSGD's rank. */
  readonly budget: number;
  /** QSGD levels s (qsgd). */
  readonly levels: number;
  /** Error feedback on an unbiased scheme (then biased); PowerSGD always has it. */
  readonly errorFeedback?: boolean;
}

/** Everything fixed for a worker across rounds. */
export interface WorkerStepOptions {
  readonly backend: TrainingBackend;
  readonly layout: ModelLayout;
  readonly compression: Compression;
  readonly batchSize: number;
  /** The run seed. */
  readonly seed: number;
  /** The worker's slot in the run: its randomness stream id. */
  readonly worker: number;
  /** The training split. */
  readonly train: Dataset;
  /** Indices into `train` of this worker's shard. */
  readonly shard: Uint32Array;
  /** A millisecond clock for the timings (Date.now by default; pass performance.now where there is one). */
  readonly now?: () => number;
}

/** One worker's contribution to round v. */
export interface WorkerStepResult {
  /** One encoded layer per parameter tensor, in layout order: what gradient:submit carries. */
  readonly layers: Uint8Array[];
  /** Mean minibatch loss of model v. */
  readonly loss: number;
  /** Per layer: closed-form E‖ĝ − g‖², realised ‖ĝ − g‖², and ‖g‖². */
  readonly layerStats: LayerStats[];
  /** Sum of the layers' byte lengths. */
  readonly bytes: number;
  /** Forward/backward time and compression (including encoding and statistics) time, in ms. */
  readonly gradientMs: number;
  readonly compressMs: number;
}

/** A worker's step function: model weights of version v → its encoded gradient for round v. */
export type WorkerStep = (weights: Float32Array, version: number) => Promise<WorkerStepResult>;

/** Prepares a worker's step: its minibatch sampler and a reusable batch buffer. */
export function createWorkerStep(options: WorkerStepOptions): WorkerStep {
  const { backend, layout, compression, batchSize, seed, worker, train } = options;
  const now = options.now ?? Date.now;
  const sampler = new MinibatchSampler(options.shard, batchSize, seed, worker);
  const indices = new Uint32Array(batchSize);
  const batch: Batch = createBatch(batchSize);
  // Error feedback and PowerSGD's warm start, per tensor, for the life of this step function.
  const memories: LayerMemory[] = layout.tensors.map(() => ({}));

  return async (weights, version) => {
    if (weights.length !== layout.parameterCount) {
      throw new RangeError(`workerStep: ${weights.length} weights, ${layout.kind} has ${layout.parameterCount}`);
    }
    const started = now();
    train.batch(sampler.batch(version, indices), batch);
    // The backend may reuse its gradient buffer on the next call; it is consumed before this step returns.
    const { loss, gradient } = await backend.lossAndGradient(weights, batch.pixels, batch.labels, batchSize);
    const computed = now();

    const layers: Uint8Array[] = [];
    const layerStats: LayerStats[] = [];
    let bytes = 0;
    layout.tensors.forEach((tensor, layer) => {
      const g = gradient.subarray(tensor.offset, tensor.offset + tensor.size);
      const stream: StreamId = { seed, worker, round: version, layer };
      const options = { budget: compression.budget, levels: compression.levels, errorFeedback: compression.errorFeedback === true, memory: memories[layer]! };
      const { sample, variance } = compressLayer(compression.scheme, g, tensor.shape, options, stream);
      const encoded = encodeLayer(sample, layer);
      layers.push(encoded);
      bytes += encoded.length;
      layerStats.push({ closedForm: variance, realised: realisedError(reconstruct(sample), g), gradientNormSq: squaredNorm(g) });
    });
    return { layers, loss, layerStats, bytes, gradientMs: computed - started, compressMs: now() - computed };
  };
}
