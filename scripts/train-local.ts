/**
 * `npm run train:local -- --model mlp --scheme atomo-svd --budget 2 --steps 1000 [--backend cpu|webgpu]
 *   [--dataset mnist|fashion]`
 *
 * Trains one worker end to end without a server (client/local/localTraining.ts)
 * and prints progress, held-out accuracy and bytes sent. With --backend webgpu
 * the model runs on Dawn (SwiftShader here) and, for the schemes it supports,
 * compression runs on the GPU too (--compress cpu keeps it on the CPU).
 *
 * Defaults (tuned with this script, see the numbers in the PR notes): batch 32,
 * learning rate 0.05, momentum 0.9: the uncompressed MLP reaches ≥ 92% held-out
 * accuracy within 1,000 steps.
 */
import { parseArgs } from 'node:util';
import { SCHEME_NAMES, type SchemeName } from '../core/atomo/types';
import { DEFAULT_BUDGET, DEFAULT_LEVELS } from '../core/atomo';
import { DATASET_NAMES, isDatasetName, loadMnist } from '../core/data';
import { createCpuBackend } from '../core/model/cpu/backend';
import { MODEL_KINDS, createModelLayout, type ModelKind } from '../core/model/layout';
import type { TrainingBackend } from '../core/model/backend';
import type { DeviceCompressor } from '../core/training/compression';
import type { GpuGradient } from '../client/gpu/training/gpuBackend';
import { trainLocally } from '../client/local/localTraining';
import { createFileReader } from '../server/data/fileReader';
import { registerRawLoader } from './rawLoader';

/** Default hyper-parameters of a local run. */
export const LOCAL_DEFAULTS = { batchSize: 32, learningRate: 0.05, momentum: 0.9, steps: 1000, seed: 1 } as const;

const { values } = parseArgs({
  options: {
    model: { type: 'string', default: 'mlp' },
    dataset: { type: 'string', default: 'mnist' },
    scheme: { type: 'string', default: 'none' },
    budget: { type: 'string', default: String(DEFAULT_BUDGET) },
    levels: { type: 'string', default: String(DEFAULT_LEVELS) },
    steps: { type: 'string', default: String(LOCAL_DEFAULTS.steps) },
    batch: { type: 'string', default: String(LOCAL_DEFAULTS.batchSize) },
    lr: { type: 'string', default: String(LOCAL_DEFAULTS.learningRate) },
    momentum: { type: 'string', default: String(LOCAL_DEFAULTS.momentum) },
    seed: { type: 'string', default: String(LOCAL_DEFAULTS.seed) },
    backend: { type: 'string', default: 'cpu' },
    compress: { type: 'string', default: 'auto' },
    every: { type: 'string', default: '100' },
  },
  strict: true,
});

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

const model = values.model as ModelKind;
if (!MODEL_KINDS.includes(model)) fail(`--model must be one of ${MODEL_KINDS.join(', ')}`);
const scheme = values.scheme as SchemeName;
if (!SCHEME_NAMES.includes(scheme)) fail(`--scheme must be one of ${SCHEME_NAMES.join(', ')}`);
if (values.backend !== 'cpu' && values.backend !== 'webgpu') fail('--backend must be cpu or webgpu');
const dataset = values.dataset;
if (!isDatasetName(dataset)) fail(`--dataset must be one of ${DATASET_NAMES.join(', ')}`);
const number = (name: keyof typeof values): number => {
  const value = Number(values[name]);
  if (!Number.isFinite(value)) fail(`--${name} must be a number`);
  return value;
};

const layout = createModelLayout(model);
const { train, test } = await loadMnist(createFileReader(), dataset);
let backend: TrainingBackend;
let deviceCompressor: DeviceCompressor<GpuGradient> | undefined;
let release = (): void => {};
if (values.backend === 'webgpu') {
  registerRawLoader();
  const { requestNodeGpu } = await import('../client/gpu/runtime/nodeDevice');
  const { createGpuBackend } = await import('../client/gpu/training/gpuBackend');
  const { createGpuCompressor } = await import('../client/gpu/compression/gpuCompressor');
  const gpu = await requestNodeGpu('train-local');
  console.log(
    `WebGPU adapter: ${gpu.adapterInfo.vendor} ${gpu.adapterInfo.architecture} ${gpu.adapterInfo.description}`.trim(),
  );
  const gpuBackend = createGpuBackend(gpu.device, layout);
  backend = gpuBackend;
  if (values.compress !== 'cpu') deviceCompressor = createGpuCompressor(gpuBackend);
  release = () => {
    deviceCompressor = undefined;
    gpuBackend.destroy();
    gpu.release();
  };
} else {
  backend = createCpuBackend(layout);
}

const compression = { scheme, budget: number('budget'), levels: number('levels') };
const steps = number('steps');
console.log(
  `train:local ${model} (${layout.parameterCount} parameters), ` +
    `scheme ${scheme} (budget ${compression.budget}, levels ${compression.levels}), ` +
    `${steps} steps of batch ${number('batch')}, lr ${number('lr')}, ` +
    `momentum ${number('momentum')}, backend ${backend.kind}`,
);
const started = performance.now();
let bytesSoFar = 0;
let lossSum = 0;
let lossCount = 0;
let compressedOn = 'cpu';
const result = await trainLocally({
  backend,
  layout,
  compression,
  train,
  test,
  steps,
  batchSize: number('batch'),
  learningRate: number('lr'),
  momentum: number('momentum'),
  seed: number('seed'),
  evaluateEvery: number('every'),
  ...(deviceCompressor === undefined ? {} : { deviceCompressor }),
  onRound(round, evaluation) {
    bytesSoFar += round.bytes;
    lossSum += round.loss;
    lossCount++;
    compressedOn = round.compressedOn;
    if (evaluation !== null) {
      console.log(
        `step ${String(round.version + 1).padStart(5)}  train loss ${(lossSum / lossCount).toFixed(4)}  ` +
          `held-out loss ${evaluation.loss.toFixed(4)}  accuracy ${(100 * evaluation.accuracy).toFixed(2)}%  ` +
          `bytes ${bytesSoFar.toLocaleString('en-US')}`,
      );
      lossSum = 0;
      lossCount = 0;
    }
  },
});
const seconds = (performance.now() - started) / 1000;
const uncompressed = steps * layout.parameterCount * 4;
console.log(
  `\nheld-out accuracy ${(100 * result.after.accuracy).toFixed(2)}% ` +
    `(loss ${result.after.loss.toFixed(4)}; before ${(100 * result.before.accuracy).toFixed(2)}%) ` +
    `after ${steps} steps in ${seconds.toFixed(1)} s`,
);
console.log(
  `bytes sent ${result.bytes.toLocaleString('en-US')} (${(uncompressed / Math.max(1, result.bytes)).toFixed(1)}× ` +
    `less than float32's ${uncompressed.toLocaleString('en-US')}), ` +
    `per round: compute ${result.meanComputeMs.toFixed(2)} ms, compress ${result.meanCompressMs.toFixed(2)} ms ` +
    `(${compressedOn}), encode ${result.meanEncodeMs.toFixed(2)} ms`,
);
release();
