/**
 * The training loop of one worker, free of React and the DOM, so it is the
 * same code in a tab and in Node (DESIGN.md §1, left column): for model
 * version v, take round v's minibatch of the worker's shard, compute the
 * loss and gradient on the backend (WebGPU or CPU), compress every layer
 * (on the GPU when the backend and the scheme allow it, else on the CPU),
 * encode it with core/codec, and report the statistics the dashboard shows.
 *
 * Randomness matches core/training/workerStep.ts: the minibatch comes from
 * MinibatchSampler(shard, B, seed, worker) and layer l's atoms from stream
 * {seed, worker, round: v, layer: l}, so a CPU round here encodes to the
 * same bytes as workerStep's.
 */
import type { LayerMemory } from '../../core/atomo';
import { encodeLayer } from '../../core/codec';
import { MinibatchSampler, createBatch, type Batch, type Dataset } from '../../core/data';
import type { TrainingBackend } from '../../core/model/backend';
import type { ModelLayout } from '../../core/model/layout';
import type { LayerStats } from '../../core/protocol';
import type { GpuTrainingBackend } from '../gpu/training/gpuBackend';
import { compressOnCpu, layerStream, type CompressedLayerStats, type Compression } from './compressor';

/** Compresses a gradient that is still on the GPU (client/gpu/compression implements it). */
export interface DeviceCompressor {
  /** Whether this compressor handles `compression` (else the loop falls back to the CPU). */
  supports(compression: Compression): boolean;
  /**
   * Compresses every tensor of the gradient the backend just computed, and
   * reads back only the samples, the statistics and the loss.
   */
  compress(
    gradient: ReturnType<GpuTrainingBackend['computeGradient']>,
    compression: Compression,
    stream: (layer: number) => ReturnType<typeof layerStream>,
  ): Promise<{ readonly loss: number; readonly layers: readonly CompressedLayerStats[] }>;
}

/** Everything fixed for a worker across rounds. */
export interface WorkerLoopOptions {
  readonly backend: TrainingBackend;
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
  /** Compress on the GPU when the backend is WebGPU and this supports the scheme. */
  readonly deviceCompressor?: DeviceCompressor;
  /** A millisecond clock (performance.now by default). */
  readonly now?: () => number;
}

/** One worker's contribution to round v. */
export interface WorkerRoundResult {
  readonly version: number;
  /** One encoded layer per parameter tensor, in layout order: what gradient:submit carries. */
  readonly layers: Uint8Array[];
  /** The samples those bytes encode (for local training, which applies them directly). */
  readonly samples: CompressedLayerStats['sample'][];
  /** Mean minibatch loss of model v. */
  readonly loss: number;
  /** Per layer: closed-form E‖ĝ − g‖², realised ‖ĝ − g‖², ‖g‖². */
  readonly layerStats: LayerStats[];
  /** ‖g‖² over all layers. */
  readonly gradientNormSq: number;
  /** Σ of the layers' byte lengths. */
  readonly bytes: number;
  /** Forward/backward, compression (sampling and read-back), and encoding time, in ms. */
  readonly computeMs: number;
  readonly compressMs: number;
  readonly encodeMs: number;
  /** Where the compression ran. */
  readonly compressedOn: 'cpu' | 'webgpu';
}

/** A worker's round function: model weights of version v → its encoded gradient for round v. */
export type WorkerRound = (weights: Float32Array, version: number) => Promise<WorkerRoundResult>;

function isGpuBackend(backend: TrainingBackend): backend is GpuTrainingBackend {
  return backend.kind === 'webgpu' && 'computeGradient' in backend;
}

/** Prepares a worker's rounds: its minibatch sampler and reusable batch buffers. */
export function createWorkerLoop(options: WorkerLoopOptions): WorkerRound {
  const { backend, layout, compression, batchSize, seed, worker, train } = options;
  const now = options.now ?? (() => performance.now());
  const sampler = new MinibatchSampler(options.shard, batchSize, seed, worker);
  const indices = new Uint32Array(batchSize);
  const batch: Batch = createBatch(batchSize);
  const device = options.deviceCompressor;
  const onDevice = device !== undefined && isGpuBackend(backend) && device.supports(compression);
  // Error feedback and PowerSGD's warm start, per tensor, for the life of this loop (one run, one model).
  const memories: LayerMemory[] = layout.tensors.map(() => ({}));

  return async (weights, version) => {
    if (weights.length !== layout.parameterCount) {
      throw new RangeError(`worker loop: ${weights.length} weights, ${layout.kind} has ${layout.parameterCount}`);
    }
    const stream = (layer: number) => layerStream(seed, worker, version, layer);
    const started = now();
    train.batch(sampler.batch(version, indices), batch);
    let loss: number;
    let compressed: readonly CompressedLayerStats[];
    let computed: number;
    if (onDevice && isGpuBackend(backend) && device !== undefined) {
      const gradient = backend.computeGradient(weights, batch.pixels, batch.labels, batchSize);
      // Waiting here costs one sync but splits compute from compression time honestly.
      await backend.device.queue.onSubmittedWorkDone();
      computed = now();
      ({ loss, layers: compressed } = await device.compress(gradient, compression, stream));
    } else {
      // The backend may reuse its gradient buffer on the next call; it is consumed before this round returns.
      const result = await backend.lossAndGradient(weights, batch.pixels, batch.labels, batchSize);
      computed = now();
      loss = result.loss;
      compressed = compressOnCpu(layout, result.gradient, compression, stream, memories);
    }
    const compressedAt = now();
    const layers = compressed.map(({ sample }, layer) => encodeLayer(sample, layer));
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
      layerStats: compressed.map(({ closedForm, realised, gradientNormSq: normSq }) => ({ closedForm, realised, gradientNormSq: normSq })),
      gradientNormSq,
      bytes,
      computeMs: computed - started,
      compressMs: compressedAt - computed,
      encodeMs: encoded - compressedAt,
      compressedOn: onDevice ? 'webgpu' : 'cpu',
    };
  };
}
