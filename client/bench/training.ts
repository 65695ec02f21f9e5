/**
 * Training benchmark page (`npm run bench -- training`): one worker round of
 * the default MLP at batch 32 (minibatch → loss and gradient → compression →
 * encoding, core/training/workerRound.ts) on our WebGPU backend and on our
 * CPU backend, per compression scheme, rounds of the two interleaved; then
 * one SGD step of the same MLP in TensorFlow.js on its WebGPU backend and on
 * its pure-JS CPU backend. Real MNIST digits (the CPU backend skips zero
 * pixels). Publishes `window.benchResult`.
 *
 * Other jobs may share the machine, so the whole sequence runs in `cycles`
 * (ours then TF.js, again and again) and the medians pool all cycles.
 *
 * Query: cycles, rounds (timed rounds per scheme and backend, all cycles
 * together), warmup (per cycle), steps (timed TF.js steps, all cycles
 * together), maxMs (time cap of one measurement once 5 rounds are in).
 */
import { reconstruct } from '../../core/atomo';
import { MinibatchSampler, createBatch, loadMnist, type Batch } from '../../core/data';
import { createCpuBackend, heInitialise } from '../../core/model';
import { createModelLayout, type ModelLayout } from '../../core/model/layout';
import { createFetchReader } from '../data/fetchReader';
import { createGpuCompressor, type GpuCompressor, type GpuCompressorOptions } from '../gpu/compression/gpuCompressor';
import { spectralCoreChoice, type SpectralCoreChoice } from '../gpu/compression/spectralCompressor';
import { requestBrowserGpu } from '../gpu/runtime/device';
import { createGpuBackend } from '../gpu/training/gpuBackend';
import type { Compression } from '../../core/atomo';
import type { BackendKind } from '../../core/model';
import { createWorkerRound, type WorkerRound, type WorkerRoundResult } from '../../core/training/workerRound';
import { poolTimings, timeTfjsSteps, type TfjsStepTiming } from './tfjsMlp';
import { benchHost, log, median, type BenchHost } from './timing';

/** Medians over the timed rounds of one backend and scheme, in ms. */
export interface RoundTiming {
  readonly totalMs: number;
  readonly computeMs: number;
  readonly compressMs: number;
  readonly encodeMs: number;
  readonly rounds: number;
  readonly bytes: number;
  readonly compressedOn: BackendKind;
  /** Loss of the first and the last timed round (the weights take an SGD step between rounds, untimed). */
  readonly firstLoss: number;
  readonly lastLoss: number;
}

export interface SchemeRow {
  readonly scheme: string;
  readonly gpu: RoundTiming;
  readonly cpu: RoundTiming;
}

/** Medians of one cycle, to show how much the load on the machine moved them. */
export interface CycleTiming {
  readonly gpuNoneMs: number;
  readonly cpuNoneMs: number;
  readonly tfjsWebgpuMs: number;
  readonly tfjsCpuMs: number;
}

/** The training benchmark's tables, and where it ran. */
export interface TrainingBenchResult extends BenchHost {
  readonly batchSize: number;
  readonly warmup: number;
  readonly cycles: readonly CycleTiming[];
  /** Medians over the rounds of all cycles. */
  readonly schemes: readonly SchemeRow[];
  /** Medians over the steps of all cycles. */
  readonly tfjs: readonly TfjsStepTiming[];
  /** Where the device route's core SVD runs on this adapter, as measured (absent when nothing measured it). */
  readonly spectralCore?: SpectralCoreChoice;
}

const BATCH_SIZE = 32;
const SEED = 1;
const LEARNING_RATE = 0.05;

const COMPRESSIONS: readonly (Compression & { label: string; gpu?: GpuCompressorOptions })[] = [
  { label: 'none', scheme: 'none', budget: 0, levels: 0 },
  { label: 'atomo-svd (budget 2)', scheme: 'atomo-svd', budget: 2, levels: 0 },
  // Spectral and Fourier ATOMO's device routes beside the defaults (host route, CPU path) in the same run
  // (docs/design.md).
  {
    label: 'atomo-svd (budget 2), device route, core SVD on the device',
    scheme: 'atomo-svd',
    budget: 2,
    levels: 0,
    gpu: { spectral: 'device', core: 'device' },
  },
  {
    label: 'atomo-svd (budget 2), device route, core SVD on the host',
    scheme: 'atomo-svd',
    budget: 2,
    levels: 0,
    gpu: { spectral: 'device', core: 'host' },
  },
  {
    label: 'atomo-svd (budget 2), device route, core SVD side measured',
    scheme: 'atomo-svd',
    budget: 2,
    levels: 0,
    gpu: { spectral: 'device' },
  },
  { label: 'atomo-entry (budget 1024)', scheme: 'atomo-entry', budget: 1024, levels: 0 },
  { label: 'atomo-dct (budget 1024)', scheme: 'atomo-dct', budget: 1024, levels: 0 },
  {
    label: 'atomo-dct (budget 1024), on the device',
    scheme: 'atomo-dct',
    budget: 1024,
    levels: 0,
    gpu: { dct: 'device' },
  },
  // atomo-auto by bytes: every decomposition on the CPU path (the default), or the DCT and SVD on the device and the
  // split on the host.
  { label: 'atomo-auto (9000 bytes)', scheme: 'atomo-auto', budget: 0, levels: 0, byteBudget: 9000 },
  {
    label: 'atomo-auto (9000 bytes), transforms on the device',
    scheme: 'atomo-auto',
    budget: 0,
    levels: 0,
    byteBudget: 9000,
    gpu: { byteBudget: 'device' },
  },
  { label: 'qsgd (4 levels)', scheme: 'qsgd', budget: 0, levels: 4 },
  { label: 'terngrad', scheme: 'terngrad', budget: 0, levels: 1 },
  // PowerSGD with error feedback on the device; P orthonormalised on the host (the default) or in WGSL
  // (powerSgdCompressor.ts).
  { label: 'powersgd (rank 2)', scheme: 'powersgd', budget: 2, levels: 0 },
  {
    label: 'powersgd (rank 2), P orthonormalised on the device',
    scheme: 'powersgd',
    budget: 2,
    levels: 0,
    gpu: { powerSgd: 'device' },
  },
];

/** A worker round with its own weights, stepped with plain SGD on its decoded estimate after every round (untimed). */
class Trainee {
  readonly #round: WorkerRound;
  readonly #params: Float32Array;
  readonly #layout: ModelLayout;
  #version = 0;
  readonly results: WorkerRoundResult[] = [];

  constructor(round: WorkerRound, layout: ModelLayout, params: Float32Array) {
    this.#round = round;
    this.#layout = layout;
    this.#params = params.slice();
  }

  /** One round; kept in `results` when `timed`. */
  async run(timed: boolean): Promise<void> {
    const result = await this.#round(this.#params, this.#version++);
    if (timed) this.results.push(result);
    this.#layout.tensors.forEach((tensor, layer) => {
      const estimate = reconstruct(result.samples[layer]!);
      const weights = this.#params.subarray(tensor.offset, tensor.offset + tensor.size);
      for (let i = 0; i < weights.length; i++) weights[i]! -= LEARNING_RATE * estimate[i]!;
    });
  }

  /** Medians of the timed rounds from index `from` on (all by default). */
  timing(from = 0): RoundTiming {
    const results = this.results.slice(from);
    const pick = (key: 'computeMs' | 'compressMs' | 'encodeMs') => median(results.map((r) => r[key]));
    return {
      totalMs: median(results.map((r) => r.computeMs + r.compressMs + r.encodeMs)),
      computeMs: pick('computeMs'),
      compressMs: pick('compressMs'),
      encodeMs: pick('encodeMs'),
      rounds: results.length,
      bytes: median(results.map((r) => r.bytes)),
      compressedOn: results[0]?.compressedOn ?? 'cpu',
      firstLoss: results[0]?.loss ?? Number.NaN,
      lastLoss: results[results.length - 1]?.loss ?? Number.NaN,
    };
  }
}

function numberParam(params: URLSearchParams, name: string, fallback: number): number {
  const value = Number(params.get(name) ?? fallback);
  return Number.isFinite(value) && value >= 0 ? value : fallback;
}

const format = (t: RoundTiming) =>
  `${t.totalMs.toFixed(1)} ms (compute ${t.computeMs.toFixed(1)}, ` +
  `compress ${t.compressMs.toFixed(1)} on ${t.compressedOn}, encode ${t.encodeMs.toFixed(2)}; ${t.rounds} rounds, ` +
  `loss ${t.firstLoss.toFixed(3)} → ${t.lastLoss.toFixed(3)})`;

/** Runs the benchmark in this page and returns its tables. */
export async function main(): Promise<TrainingBenchResult> {
  const query = new URLSearchParams(location.search);
  const cycles = Math.max(1, Math.round(numberParam(query, 'cycles', 3)));
  const rounds = numberParam(query, 'rounds', 30);
  const warmup = numberParam(query, 'warmup', 3);
  const steps = numberParam(query, 'steps', 30);
  const maxMs = numberParam(query, 'maxMs', 20_000);

  const ctx = await requestBrowserGpu({ label: 'bench' });
  const host = benchHost(ctx.adapterInfo);
  log(`adapter: ${host.adapter}`);
  const { train } = await loadMnist(createFetchReader('/data'));
  log(`MNIST: ${train.count} training digits`);

  const layout = createModelLayout('mlp');
  const initial = heInitialise(layout, SEED);
  const gpuBackend = createGpuBackend(ctx.device, layout);
  // One GPU compressor per option set; the default one for the rows without options.
  const compressors = new Map<string, GpuCompressor>();
  const compressorFor = (options: GpuCompressorOptions = {}): GpuCompressor => {
    const key = JSON.stringify(options);
    let compressor = compressors.get(key);
    if (compressor === undefined) {
      compressor = createGpuCompressor(gpuBackend, options);
      compressors.set(key, compressor);
    }
    return compressor;
  };
  const cpuBackend = createCpuBackend(layout);
  const shard = Uint32Array.from({ length: train.count }, (_, i) => i);
  // The wall clock (the worker round's default): the bench times the page's rounds as a tab sees them.
  const common = { layout, batchSize: BATCH_SIZE, seed: SEED, worker: 0, train, shard };

  // The same digits TF.js trains on: the first rounds' minibatches of the same sampler.
  const sampler = new MinibatchSampler(shard, BATCH_SIZE, SEED, 0);
  const batches: Batch[] = Array.from({ length: 16 }, (_, round) =>
    train.batch(sampler.batch(round), createBatch(BATCH_SIZE)),
  );

  const trainees = COMPRESSIONS.map((compression) => ({
    label: compression.label,
    scheme: compression.scheme,
    gpu: new Trainee(
      createWorkerRound({
        ...common,
        backend: gpuBackend,
        compression,
        deviceCompressor: compressorFor(compression.gpu),
      }),
      layout,
      initial,
    ),
    cpu: new Trainee(createWorkerRound({ ...common, backend: cpuBackend, compression }), layout, initial),
  }));
  const tfjsRuns = new Map<string, TfjsStepTiming[]>();
  const cycleTimings: CycleTiming[] = [];
  const perCycle = (total: number) => Math.max(5, Math.ceil(total / cycles));
  try {
    for (let cycle = 0; cycle < cycles; cycle++) {
      let gpuNoneMs = Number.NaN;
      let cpuNoneMs = Number.NaN;
      for (const { label, scheme, gpu, cpu } of trainees) {
        for (let i = 0; i < warmup; i++) {
          await gpu.run(false);
          await cpu.run(false);
        }
        // Interleaved, so load from other processes on this machine falls on both alike.
        const from = gpu.results.length;
        const started = performance.now();
        for (let i = 0; i < perCycle(rounds); i++) {
          await gpu.run(true);
          await cpu.run(true);
          if (i + 1 >= 5 && performance.now() - started > (2 * maxMs) / cycles) break;
        }
        const [g, c] = [gpu.timing(from), cpu.timing(from)];
        if (scheme === 'none') [gpuNoneMs, cpuNoneMs] = [g.totalMs, c.totalMs];
        log(`cycle ${cycle + 1}, ${label}: GPU ${format(g)}; CPU ${format(c)}`);
      }
      const stepMs: Record<string, number> = {};
      for (const backend of ['webgpu', 'cpu'] as const) {
        const timing = await timeTfjsSteps({
          backend,
          layout,
          params: initial,
          batches,
          learningRate: LEARNING_RATE,
          warmup,
          steps: perCycle(steps),
          maxMs: maxMs / cycles,
        });
        tfjsRuns.set(backend, [...(tfjsRuns.get(backend) ?? []), timing]);
        stepMs[backend] = timing.stepMs;
        log(
          `cycle ${cycle + 1}, TF.js ${timing.backend}: ${timing.stepMs.toFixed(1)} ms per step ` +
            `(${timing.steps} steps, loss ${timing.firstLoss.toFixed(3)} → ${timing.lastLoss.toFixed(3)}, ` +
            `${timing.leakedTensors} tensors leaked)`,
        );
      }
      cycleTimings.push({
        gpuNoneMs,
        cpuNoneMs,
        tfjsWebgpuMs: stepMs.webgpu ?? Number.NaN,
        tfjsCpuMs: stepMs.cpu ?? Number.NaN,
      });
    }
  } finally {
    for (const compressor of compressors.values()) compressor.destroy();
    gpuBackend.destroy();
  }
  const schemes: SchemeRow[] = trainees.map(({ label, gpu, cpu }) => ({
    scheme: label,
    gpu: gpu.timing(),
    cpu: cpu.timing(),
  }));
  const tfjs: TfjsStepTiming[] = [...tfjsRuns.values()].map(poolTimings);
  const spectralCore = spectralCoreChoice(ctx.device);
  if (spectralCore !== undefined) {
    log(
      `spectral core SVD on this adapter: device ${spectralCore.deviceMs.toFixed(1)} ms, ` +
        `host ${spectralCore.hostMs.toFixed(1)} ms per compress → ${spectralCore.core}`,
    );
  }
  return {
    ...host,
    batchSize: BATCH_SIZE,
    warmup,
    cycles: cycleTimings,
    schemes,
    tfjs,
    ...(spectralCore === undefined ? {} : { spectralCore }),
  };
}
