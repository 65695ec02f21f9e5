/**
 * One worker trained end to end without a server (`npm run train:local`, and
 * the worker-round tests): every round, the worker round's compressed gradient
 * is decoded back into a dense unbiased estimate ĝ (exactly what the
 * aggregator would average) and applied with SGD + momentum.
 */
import { reconstruct } from '../../core/atomo';
import type { Compression } from '../../core/atomo';
import type { Dataset } from '../../core/data';
import { evaluate, type Evaluation } from '../../core/model/evaluate';
import { heInitialise } from '../../core/model/init';
import type { ModelLayout } from '../../core/model/layout';
import { sgdMomentumStep } from '../../core/model/optimiser';
import type { DeviceCompressor } from '../../core/training/compression';
import { createWorkerRound, type WorkerRoundOptions, type WorkerRoundResult } from '../../core/training/workerRound';

/** Hyper-parameters of a local run. */
export interface LocalTrainingOptions<G = unknown> {
  readonly backend: WorkerRoundOptions<G>['backend'];
  readonly layout: ModelLayout;
  readonly compression: Compression;
  readonly train: Dataset;
  readonly test: Dataset;
  readonly steps: number;
  readonly batchSize: number;
  readonly learningRate: number;
  readonly momentum: number;
  readonly seed: number;
  /** Held-out examples evaluated (the first ones of `test`); all by default. */
  readonly heldOut?: number;
  /** Evaluate every this many steps (and at the end); 0: only at the end. */
  readonly evaluateEvery?: number;
  readonly deviceCompressor?: DeviceCompressor<G>;
  /** Called after every round, and with an evaluation when one was made. */
  readonly onRound?: (round: WorkerRoundResult, evaluation: Evaluation | null) => void;
}

/** What a local run ends with. */
export interface LocalTrainingResult {
  readonly before: Evaluation;
  readonly after: Evaluation;
  readonly params: Float32Array;
  /** Σ encoded bytes over all rounds. */
  readonly bytes: number;
  /** Mean per-round times, ms. */
  readonly meanComputeMs: number;
  readonly meanCompressMs: number;
  readonly meanEncodeMs: number;
}

/** Trains one worker whose shard is the whole training split. */
export async function trainLocally<G>(options: LocalTrainingOptions<G>): Promise<LocalTrainingResult> {
  const { backend, layout, test, steps, learningRate, momentum } = options;
  const heldOut = Math.min(options.heldOut ?? test.count, test.count);
  const params = heInitialise(layout, options.seed);
  const velocity = new Float32Array(layout.parameterCount);
  const estimate = new Float32Array(layout.parameterCount);
  const shard = Uint32Array.from({ length: options.train.count }, (_, i) => i);
  const round = createWorkerRound({
    backend,
    layout,
    compression: options.compression,
    batchSize: options.batchSize,
    seed: options.seed,
    worker: 0,
    train: options.train,
    shard,
    ...(options.deviceCompressor === undefined ? {} : { deviceCompressor: options.deviceCompressor }),
  });
  const evaluateNow = () => evaluate(backend, params, test.images, test.labels, heldOut);
  const before = await evaluateNow();
  let bytes = 0;
  let computeMs = 0;
  let compressMs = 0;
  let encodeMs = 0;
  let after = before;
  for (let version = 0; version < steps; version++) {
    const result = await round(params, version);
    layout.tensors.forEach((tensor, layer) => estimate.set(reconstruct(result.samples[layer]!), tensor.offset));
    sgdMomentumStep(params, velocity, estimate, learningRate, momentum);
    bytes += result.bytes;
    computeMs += result.computeMs;
    compressMs += result.compressMs;
    encodeMs += result.encodeMs;
    const every = options.evaluateEvery ?? 0;
    const last = version === steps - 1;
    const evaluation = last || (every > 0 && (version + 1) % every === 0) ? await evaluateNow() : null;
    if (evaluation !== null) after = evaluation;
    options.onRound?.(result, evaluation);
  }
  const rounds = Math.max(1, steps);
  return {
    before,
    after,
    params,
    bytes,
    meanComputeMs: computeMs / rounds,
    meanCompressMs: compressMs / rounds,
    meanEncodeMs: encodeMs / rounds,
  };
}
