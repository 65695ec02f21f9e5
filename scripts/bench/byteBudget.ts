/**
 * `npm run bench -- bytes`: what compressing a worker's gradient costs on the
 * CPU when its budget is bytes for the whole model (core/atomo/byteBudget.ts:
 * the decompositions, the split, one draw per layer), against the same
 * schemes at a per-layer budget s, and what measuring the per-layer indicator
 * adds to a round that takes no SVD (core/training/workerRound.ts,
 * INDICATOR_EVERY). MLP and CNN at batch 32, real MNIST minibatches at
 * He-initialised weights; the round's whole compressOnCpu, statistics
 * included. CPU time (process.cpuUsage) as well as wall time, since the
 * machine is shared. Option: --rounds N (8 by default).
 *
 * Then, not a timing: the closed-form variance each ATOMO scheme buys with
 * the same bytes (TernGrad's, as the race and the comparison match them),
 * split across layers, on gradients along a training run (SGD on the true
 * gradient, snapshots every 30 of 300 rounds, 3 seeds), with each layer's
 * indicator and atomo-auto's choice: does the per-layer choice beat both
 * fixed decompositions?
 */

import type { Compression } from '../../core/atomo/types';
import { loadMnist, MinibatchSampler } from '../../core/data';
import { createCpuBackend } from '../../core/model/cpu/backend';
import { heInitialise } from '../../core/model/init';
import { createModelLayout, type ModelKind } from '../../core/model/layout';
import { defaultByteBudget } from '../../core/schema';
import { planByBytes, type ByteBudgetScheme } from '../../core/atomo/compressByBytes';
import { nuclearNorm, spectralIndicator } from '../../core/atomo/indicator';
import { squaredNorm } from '../../core/atomo/variance';
import { matchedTargetBytes } from '../../core/codec/budgets';
import { sgdMomentumStep } from '../../core/model/optimiser';
import { compressOnCpu, layerGradients, type LayerGradient } from '../../core/training/compression';
import { createFileReader } from '../../server/data/fileReader';
import { fmt, loadText, markdownTable, writeSection } from './report';

const BATCH = 32;
const SEED = 7;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Case {
  readonly label: string;
  readonly compression: Compression;
  readonly measureIndicator?: boolean;
}

function cases(kind: ModelKind): Case[] {
  const bytes = defaultByteBudget(kind, BATCH);
  return [
    { label: 'none (float32)', compression: { scheme: 'none', budget: 0, levels: 1 } },
    {
      label: 'none, with the indicator of every layer',
      compression: { scheme: 'none', budget: 0, levels: 1 },
      measureIndicator: true,
    },
    {
      label: 'terngrad, with the indicator of every layer',
      compression: { scheme: 'terngrad', budget: 0, levels: 1 },
      measureIndicator: true,
    },
    { label: 'terngrad', compression: { scheme: 'terngrad', budget: 0, levels: 1 } },
    { label: 'atomo-svd s=2', compression: { scheme: 'atomo-svd', budget: 2, levels: 1 } },
    { label: 'atomo-entry s=1024', compression: { scheme: 'atomo-entry', budget: 1024, levels: 1 } },
    { label: 'atomo-dct s=1024', compression: { scheme: 'atomo-dct', budget: 1024, levels: 1 } },
    {
      label: `atomo-svd, ${bytes} B split across layers`,
      compression: { scheme: 'atomo-svd', budget: 2, levels: 1, byteBudget: bytes },
    },
    {
      label: `atomo-entry, ${bytes} B split across layers`,
      compression: { scheme: 'atomo-entry', budget: 2, levels: 1, byteBudget: bytes },
    },
    {
      label: `atomo-dct, ${bytes} B split across layers`,
      compression: { scheme: 'atomo-dct', budget: 2, levels: 1, byteBudget: bytes },
    },
    {
      label: `atomo-auto, ${bytes} B split across layers`,
      compression: { scheme: 'atomo-auto', budget: 0, levels: 1, byteBudget: bytes },
    },
  ];
}

async function benchModel(
  kind: ModelKind,
  rounds: number,
  train: Awaited<ReturnType<typeof loadMnist>>['train'],
): Promise<string[][]> {
  const layout = createModelLayout(kind);
  const backend = createCpuBackend(layout);
  const weights = heInitialise(layout, SEED);
  const sampler = new MinibatchSampler(
    Uint32Array.from({ length: 4096 }, (_, i) => i),
    BATCH,
    SEED,
    0,
  );
  const all = cases(kind);
  const wall = new Map<string, number[]>(all.map((c) => [c.label, []]));
  const cpu = new Map<string, number[]>(all.map((c) => [c.label, []]));
  const computeMs: number[] = [];
  for (let round = 0; round < rounds + 1; round++) {
    const batch = train.batch(sampler.batch(round));
    const t0 = performance.now();
    const result = await backend.lossAndGradient(weights, batch.pixels, batch.labels, BATCH);
    if (round > 0) computeMs.push(performance.now() - t0);
    // Copies: the backend reuses its buffers on the next call.
    const layers: LayerGradient[] = layerGradients(layout, {
      gradient: result.gradient.slice(),
      factors: new Map(
        [...(result.factors ?? new Map())].map(([k, f]) => [
          k,
          { input: f.input.slice(), delta: f.delta.slice(), batch: f.batch },
        ]),
      ),
    });
    for (const c of all) {
      const stream = (layer: number) => ({ seed: SEED, worker: 0, round, layer });
      const c0 = process.cpuUsage();
      const w0 = performance.now();
      compressOnCpu(layers, c.compression, stream, { measureIndicator: c.measureIndicator === true });
      const w = performance.now() - w0;
      const used = process.cpuUsage(c0);
      // The first round compiles; it is not timed.
      if (round > 0) {
        wall.get(c.label)!.push(w);
        cpu.get(c.label)!.push((used.user + used.system) / 1000);
      }
    }
  }
  const baseline = median(cpu.get('atomo-entry s=1024')!);
  return all.map((c) => [
    kind.toUpperCase(),
    c.label,
    fmt(median(cpu.get(c.label)!)),
    fmt(median(wall.get(c.label)!)),
    `${fmt(median(cpu.get(c.label)!) / baseline)}×`,
    fmt(median(computeMs)),
  ]);
}

const MATCHED_SCHEMES: readonly ByteBudgetScheme[] = ['atomo-auto', 'atomo-svd', 'atomo-entry', 'atomo-dct'];
const TRAJECTORY_ROUNDS = 300;
const SNAPSHOT_EVERY = 30;
const SEEDS = [1, 2, 3];

/** Mean ± sd over the seeds, as text. */
function spread(xs: readonly number[]): string {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / Math.max(1, xs.length - 1));
  return `${fmt(mean)} ± ${fmt(sd, 2)}`;
}

/**
 * Variance at matched bytes along a training run, per seed: the mean over snapshots of Σ V / Σ‖g‖² for each
 * scheme, and each layer's indicator range and auto's choices.
 */
async function matchedVariance(
  kind: ModelKind,
  train: Awaited<ReturnType<typeof loadMnist>>['train'],
): Promise<string> {
  const layout = createModelLayout(kind);
  const backend = createCpuBackend(layout);
  const target = Math.round(matchedTargetBytes(layout, BATCH));
  const relative = new Map<ByteBudgetScheme, number[]>(MATCHED_SCHEMES.map((s) => [s, []]));
  const indicators: number[][] = layout.tensors.map(() => []);
  const chosen: Record<string, number>[] = layout.tensors.map(() => ({}));
  for (const seed of SEEDS) {
    const params = heInitialise(layout, seed);
    const velocity = new Float32Array(layout.parameterCount);
    const sampler = new MinibatchSampler(
      Uint32Array.from({ length: train.count }, (_, i) => i),
      BATCH,
      seed,
      0,
    );
    const sums = new Map<ByteBudgetScheme, number>(MATCHED_SCHEMES.map((s) => [s, 0]));
    let snapshots = 0;
    for (let round = 0; round < TRAJECTORY_ROUNDS; round++) {
      const result = await backend.lossAndGradient(params, ...batchOf(train, sampler, round), BATCH);
      if (round % SNAPSHOT_EVERY === SNAPSHOT_EVERY - 1) {
        const layers = layerGradients(layout, result).map(({ values, shape, factors }) => ({
          grad: values.slice(),
          shape,
          factors,
        }));
        const normSq = layers.reduce((sum, l) => sum + squaredNorm(l.grad), 0);
        layers.forEach((l, i) =>
          indicators[i]!.push(
            spectralIndicator(nuclearNorm(l.grad, l.shape, l.factors), l.grad, l.shape) ?? Number.NaN,
          ),
        );
        for (const scheme of MATCHED_SCHEMES) {
          const { plans } = planByBytes(scheme, layers, target);
          sums.set(scheme, sums.get(scheme)! + plans.reduce((sum, p) => sum + p.point.variance, 0) / normSq);
          if (scheme === 'atomo-auto')
            plans.forEach((p, i) => (chosen[i]![p.option] = (chosen[i]![p.option] ?? 0) + 1));
        }
        snapshots++;
      }
      sgdMomentumStep(params, velocity, result.gradient, 0.05, 0.9);
    }
    for (const scheme of MATCHED_SCHEMES) relative.get(scheme)!.push(sums.get(scheme)! / snapshots);
  }
  const mean = (scheme: ByteBudgetScheme) => relative.get(scheme)!.reduce((a, b) => a + b, 0) / SEEDS.length;
  const schemes = MATCHED_SCHEMES.map(
    (s) => `${s} ${spread(relative.get(s)!)} (${fmt(mean(s) / mean('atomo-auto'))}×)`,
  );
  for (const [i, tensor] of layout.tensors.entries()) {
    const choices = Object.entries(chosen[i]!).map(([option, n]) => `${option} ${n}`);
    console.log(
      `${kind} ${tensor.name}: indicator ${fmt(Math.min(...indicators[i]!))}–${fmt(Math.max(...indicators[i]!))}, ` +
        `atomo-auto chose ${choices.join(', ')}`,
    );
  }
  return `${kind.toUpperCase()} at ${target} B: ${schemes.join(', ')}`;
}

function batchOf(
  train: Awaited<ReturnType<typeof loadMnist>>['train'],
  sampler: MinibatchSampler,
  round: number,
): [Float32Array, Uint8Array] {
  const batch = train.batch(sampler.batch(round));
  return [batch.pixels, batch.labels];
}

/** Runs the suite for both models and writes its section. */
const HEADER = ['model', 'compression', 'CPU ms', 'wall ms', 'CPU ÷ atomo-entry s=1024', 'gradient compute ms'];

export async function benchByteBudget(): Promise<void> {
  const args = process.argv.slice(2);
  const at = args.indexOf('--rounds');
  const rounds = at >= 0 ? Number(args[at + 1]) : 8;
  if (!Number.isInteger(rounds) || rounds < 1) throw new RangeError('--rounds must be a positive integer');
  const { train } = await loadMnist(createFileReader());
  const loadBefore = loadText();
  const rows: string[][] = [];
  for (const kind of ['mlp', 'cnn'] as const) rows.push(...(await benchModel(kind, rounds, train)));
  console.log(markdownTable(HEADER, rows));
  const matched: string[] = [];
  for (const kind of ['mlp', 'cnn'] as const) {
    const line = await matchedVariance(kind, train);
    console.log(line);
    matched.push(line);
  }
  writeSection('bytes', {
    title: 'Compression under a byte budget',
    command: `npm run bench -- bytes${at >= 0 ? ` --rounds ${rounds}` : ''}`,
    loadBefore,
    how: [
      `Each compression on the CPU (compressOnCpu, all layers, statistics included), medians over ${rounds} MNIST ` +
        "minibatches after an untimed one; the byte budget is the model's default (what atomo-svd at s = 2 sends).",
      '"with the indicator" rows cost what a round that measures ' +
        '‖G‖_*·√(m+n)/‖g‖₁ costs (one in INDICATOR_EVERY).',
      `Closed-form variance ÷ ‖g‖² at TernGrad's bytes split ` +
        `across layers (mean ± sd over seeds ${SEEDS.join(', ')}, ` +
        `${TRAJECTORY_ROUNDS} rounds of SGD, lower is better; ÷ atomo-auto's): ${matched.join('; ')}.`,
    ],
    header: HEADER,
    rows,
  });
}
