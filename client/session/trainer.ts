/**
 * A worker's computation for one run, behind one small interface so the page
 * never cares where it runs: core/training's worker round on the GPU backend with GPU
 * compression, or on the CPU backend. `createTrainer` is the one line that
 * picks.
 */
import type { Dataset } from '../../core/data';
import { createCpuBackend, createModelLayout, type ModelLayout, type TrainingBackend } from '../../core/model';
import type { RunConfig } from '../../core/protocol';
import { createGpuCompressor, type GpuCompressor } from '../gpu/compression/gpuCompressor';
import type { GpuContext } from '../gpu/runtime/device';
import { createGpuBackend, type GpuTrainingBackend } from '../gpu/training/gpuBackend';
import { playedRound, type PlayedRound } from '../../core/training/roundPlayer';
import { WALL_CLOCK, createWorkerRound, type StepClock } from '../../core/training/workerRound';

/** What one round of this worker produced, ready for gradient:submit and the charts. */
export interface TrainerRound extends PlayedRound {
  /** Σ of the layers' byte lengths. */
  readonly bytes: number;
}

/** A worker's model computation for one run configuration and shard. */
export interface Trainer {
  readonly kind: 'webgpu' | 'cpu';
  readonly layout: ModelLayout;
  /** The clock of its timings: the host's CPU clock on the CPU, the wall clock on WebGPU (whose work is the GPU's). */
  readonly clock: StepClock;
  /** Round `version`'s gradient of model `weights`, compressed and encoded. */
  round(weights: Float32Array, version: number): Promise<TrainerRound>;
  /** Predicted digit of each of `count` images (count·784 floats in [0,1]). */
  predict(weights: Float32Array, images: Float32Array, count: number): Promise<Uint8Array>;
  /**
   * A trainer on the same device resources (compiled kernels, buffers) with
   * no memory of this one's rounds (error feedback, warm starts): after
   * timing rounds, the real ones start clean. This one must not be used after.
   */
  restart(): Trainer;
  /** Frees GPU buffers. */
  dispose(): void;
}

/** Where a trainer computes: a WebGPU device, or the CPU. */
export type ComputeDevice = { readonly kind: 'webgpu'; readonly ctx: GpuContext } | { readonly kind: 'cpu' };

/** What a trainer is built from. */
export interface TrainerOptions {
  readonly device: ComputeDevice;
  readonly config: RunConfig;
  /** The worker's slot: its minibatch and Bernoulli stream id. */
  readonly slot: number;
  readonly train: Dataset;
  /** Indices of the worker's shard in `train`. */
  readonly shard: Uint32Array;
  /** A CPU trainer's clock (WALL_CLOCK by default; a Node thread passes its thread CPU clock). */
  readonly cpuClock?: StepClock;
}

function argmaxRows(logits: Float32Array, count: number, classes: number): Uint8Array {
  const out = new Uint8Array(count);
  for (let row = 0; row < count; row++) {
    let best = 0;
    for (let c = 1; c < classes; c++) if (logits[row * classes + c]! > logits[row * classes + best]!) best = c;
    out[row] = best;
  }
  return out;
}

function predictor(backend: TrainingBackend, layout: ModelLayout): Trainer['predict'] {
  return async (weights, images, count) =>
    argmaxRows(await backend.predict(weights, images, count), count, layout.classCount);
}

/** The trainer around the worker round on `backend`; `deviceCompressor` keeps compression on the GPU. */
function loopTrainer(
  kind: Trainer['kind'],
  options: TrainerOptions,
  layout: ModelLayout,
  backend: TrainingBackend,
  deviceCompressor: GpuCompressor | undefined,
  clock: StepClock,
  dispose: () => void,
): Trainer {
  const { config } = options;
  const loop = createWorkerRound({
    backend,
    layout,
    compression: config,
    batchSize: config.batchSize,
    seed: config.seed,
    worker: options.slot,
    train: options.train,
    shard: options.shard,
    ...(deviceCompressor === undefined ? {} : { deviceCompressor }),
    clock,
  });
  return {
    kind,
    layout,
    clock,
    async round(weights, version) {
      const r = await loop(weights, version);
      return { ...playedRound(r), bytes: r.bytes };
    },
    predict: predictor(backend, layout),
    restart: () => loopTrainer(kind, options, layout, backend, deviceCompressor, clock, dispose),
    dispose,
  };
}

function cpuTrainer(options: TrainerOptions, layout: ModelLayout): Trainer {
  return loopTrainer(
    'cpu',
    options,
    layout,
    createCpuBackend(layout),
    undefined,
    options.cpuClock ?? WALL_CLOCK,
    () => {},
  );
}

function gpuTrainer(options: TrainerOptions, ctx: GpuContext, layout: ModelLayout): Trainer {
  const backend: GpuTrainingBackend = createGpuBackend(ctx.device, layout);
  const compressor: GpuCompressor = createGpuCompressor(backend);
  return loopTrainer('webgpu', options, layout, backend, compressor, WALL_CLOCK, () => {
    compressor.destroy();
    backend.destroy();
  });
}

/** Builds the trainer of one run configuration on `options.device`. */
export function createTrainer(options: TrainerOptions): Trainer {
  const layout = createModelLayout(options.config.model);
  return options.device.kind === 'webgpu'
    ? gpuTrainer(options, options.device.ctx, layout)
    : cpuTrainer(options, layout);
}
