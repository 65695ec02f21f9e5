/**
 * The baseline of the training benchmark: one SGD step of the same MLP
 * (784-128-10, ReLU, mean softmax cross-entropy) in TensorFlow.js, on
 * whichever TF.js backend is asked for, with the minibatches already on the
 * device, as a TF.js user would train it.
 */
import * as tf from '@tensorflow/tfjs-core';
// tfjs-core alone registers no gradients; the @tensorflow/tfjs bundle imports this for its users.
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import '@tensorflow/tfjs-backend-cpu';
import '@tensorflow/tfjs-backend-webgpu';
import type { Batch } from '../../core/data';
import { findTensor, type ModelLayout } from '../../core/model/layout';
import { log, median } from './timing';

/** Median time of one TF.js step and what it did. */
export interface TfjsStepTiming {
  /** TF.js's backend name: 'webgpu' or 'cpu'. */
  readonly backend: string;
  readonly stepMs: number;
  readonly steps: number;
  /** Every timed step, ms. */
  readonly stepTimesMs: readonly number[];
  /** Loss of the first and the last timed step (a sanity check that it trains). */
  readonly firstLoss: number;
  readonly lastLoss: number;
  /** Tensors alive after the run minus before it (0: nothing leaks). */
  readonly leakedTensors: number;
}

export interface TfjsStepOptions {
  readonly backend: 'webgpu' | 'cpu';
  readonly layout: ModelLayout;
  /** Initial parameters, laid out like `layout` (dense weights in × out, as TF.js's matMul(x, W) wants). */
  readonly params: Float32Array;
  /** Minibatches, uploaded once and cycled through. */
  readonly batches: readonly Batch[];
  readonly learningRate: number;
  readonly warmup: number;
  readonly steps: number;
  /** Stop timing after this many ms once 5 steps are in. */
  readonly maxMs: number;
}

/**
 * Times `steps` SGD steps of the MLP in TF.js: forward, backward and update
 * in `optimizer.minimize`, each step forced by reading its loss back.
 */
export async function timeTfjsSteps(options: TfjsStepOptions): Promise<TfjsStepTiming> {
  const { layout, params } = options;
  const batchSize = options.batches[0]?.labels.length ?? 0;
  if (!(await tf.setBackend(options.backend))) throw new Error(`TF.js backend ${options.backend} is unavailable`);
  await tf.ready();
  if (options.backend === 'webgpu')
    log(`TF.js WEBGPU_CPU_HANDOFF_SIZE_THRESHOLD = ${String(tf.env().get('WEBGPU_CPU_HANDOFF_SIZE_THRESHOLD'))}`);
  const before = tf.memory().numTensors;

  const weight = (name: string, rows: number, cols: number) => {
    const tensor = findTensor(layout, name);
    // tidy frees the initial tensor; the variable is not tracked by it.
    return tf.tidy(() =>
      tf.variable(
        tf.tensor2d(params.subarray(tensor.offset, tensor.offset + tensor.size), [rows, cols]),
        true,
        `Bench.${name}`,
      ),
    );
  };
  const hidden = findTensor(layout, 'dense1.bias').size;
  const inputs = layout.inputSize;
  const classes = layout.classCount;
  const w1 = weight('dense1.weight', inputs, hidden);
  const b1 = weight('dense1.bias', 1, hidden);
  const w2 = weight('dense2.weight', hidden, classes);
  const b2 = weight('dense2.bias', 1, classes);
  const variables = [w1, b1, w2, b2];
  const data = options.batches.map((batch) =>
    tf.tidy(() => ({
      x: tf.tensor2d(batch.pixels.subarray(0, batchSize * inputs), [batchSize, inputs]),
      y: tf.cast(tf.oneHot(tf.tensor1d(Int32Array.from(batch.labels), 'int32'), classes), 'float32'),
    })),
  );
  for (const { x, y } of data) {
    tf.keep(x);
    tf.keep(y);
  }
  const optimiser = tf.train.sgd(options.learningRate);
  const step = async (index: number): Promise<number> => {
    const { x, y } = data[index % data.length]!;
    const cost = optimiser.minimize(
      () => {
        const h = tf.relu(tf.add(tf.matMul(x, w1), b1));
        const logits = tf.add(tf.matMul(h, w2), b2);
        return tf.losses.softmaxCrossEntropy(y, logits);
      },
      true,
      variables,
    );
    if (cost === null) throw new Error('TF.js minimize returned no cost');
    const [loss] = await cost.data();
    cost.dispose();
    return loss ?? Number.NaN;
  };

  const times: number[] = [];
  const losses: number[] = [];
  try {
    for (let i = 0; i < options.warmup; i++) await step(i); // compiles the pipelines: not timed
    const started = performance.now();
    for (let i = 0; i < options.steps; i++) {
      const start = performance.now();
      losses.push(await step(options.warmup + i));
      times.push(performance.now() - start);
      if (times.length >= 5 && performance.now() - started > options.maxMs) break;
    }
  } finally {
    optimiser.dispose();
    for (const { x, y } of data) tf.dispose([x, y]);
    tf.dispose(variables);
  }
  return {
    backend: tf.getBackend(),
    stepMs: median(times),
    steps: times.length,
    stepTimesMs: times,
    firstLoss: losses[0] ?? Number.NaN,
    lastLoss: losses[losses.length - 1] ?? Number.NaN,
    leakedTensors: tf.memory().numTensors - before,
  };
}

/** Runs of one backend pooled: the median over all their steps; losses of the first run (each run starts afresh). */
export function poolTimings(runs: readonly TfjsStepTiming[]): TfjsStepTiming {
  const first = runs[0];
  if (first === undefined) throw new RangeError('poolTimings: no runs');
  const stepTimesMs = runs.flatMap((run) => run.stepTimesMs);
  return {
    ...first,
    stepMs: median(stepTimesMs),
    steps: stepTimesMs.length,
    stepTimesMs,
    leakedTensors: runs.reduce((sum, run) => sum + run.leakedTensors, 0),
  };
}
