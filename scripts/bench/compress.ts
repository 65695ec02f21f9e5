/**
 * `npm run bench -- compress`: what compressing a worker's gradient costs on
 * the CPU, per layer and per scheme, against the gradient's own compute time
 * (forward + backward of the same minibatch), for the MLP and the CNN at
 * batch 32, on real MNIST minibatches at He-initialised weights.
 *
 * For spectral ATOMO it times, in the same run and on the same gradients:
 * the route a worker takes (factored: QRs of X and Δ and a batch×batch core
 * SVD, core/linalg/factoredSvd.ts), the route before it (rank-revealing QR of
 * the full gradient, core/linalg/lowRankSvd.ts), a full one-sided Jacobi SVD
 * (core/linalg/svd.ts) and ml-matrix's SVD (Golub–Kahan, the bench's only use
 * of that package). For entry-wise ATOMO it counts the bytes of the current
 * encoding (τ + 2-bit codes) against the previous one (a float32 per entry).
 * Options: --rounds N (minibatches timed, 8 by default), --reference N
 * (minibatches for the slow full SVDs, 2 by default).
 */
import { loadavg } from 'node:os';

import { Matrix, SVD } from 'ml-matrix';
import { SCHEMES, spectralRoute } from '../../core/atomo';
import type { Compression } from '../../core/atomo/types';
import { encodedByteLength } from '../../core/codec';
import { varintLength } from '../../core/codec/varint';
import { loadMnist, MinibatchSampler } from '../../core/data';
import { svdLowRank } from '../../core/linalg/lowRankSvd';
import { svdJacobi } from '../../core/linalg/svd';
import { createCpuBackend } from '../../core/model/cpu/backend';
import { heInitialize } from '../../core/model/init';
import { createModelLayout, type ModelKind } from '../../core/model/layout';
import { compressOnCpu, layerGradients, type LayerGradient } from '../../core/training/compression';
import { createFileReader } from '../../server/data/fileReader';
import { fmt, markdownTable, writeSection } from './report';

const BATCH = 32;
const SEED = 7;

function option(name: string, fallback: number): number {
  const args = process.argv.slice(2);
  const index = args.indexOf(`--${name}`);
  const value = index >= 0 ? Number(args[index + 1]) : fallback;
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`--${name} must be a positive integer`);
  return value;
}

const load = () =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(' / ');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Milliseconds of one call. */
function time(f: () => unknown): number {
  const t0 = performance.now();
  f();
  return performance.now() - t0;
}

interface Case {
  readonly label: string;
  readonly compression: Compression;
  /** Whether the compressor sees the dense layers' factors (the worker's route) or only the gradient (the previous route). */
  readonly factors: boolean;
}

const CASES: readonly Case[] = [
  { label: 'none (float32)', compression: { scheme: 'none', budget: 2, levels: 1 }, factors: true },
  { label: 'atomo-svd s=2, factored (worker route)', compression: { scheme: 'atomo-svd', budget: 2, levels: 1 }, factors: true },
  { label: 'atomo-svd s=2, full-gradient QR (previous route)', compression: { scheme: 'atomo-svd', budget: 2, levels: 1 }, factors: false },
  { label: 'atomo-entry s=1024', compression: { scheme: 'atomo-entry', budget: 1024, levels: 1 }, factors: true },
  { label: 'qsgd 1 level', compression: { scheme: 'qsgd', budget: 2, levels: 1 }, factors: true },
  { label: 'terngrad', compression: { scheme: 'terngrad', budget: 2, levels: 1 }, factors: true },
];

/** Bytes the previous entry-wise layout took for the same sample: a varint gap and a float32 per entry. */
function previousEntryBytes(indices: Uint32Array): number {
  let bytes = 12 + 4;
  let previous = -1;
  for (const index of indices) {
    bytes += varintLength(index - previous - 1) + 4;
    previous = index;
  }
  return bytes;
}

async function benchModel(kind: ModelKind, rounds: number, referenceRounds: number, train: Awaited<ReturnType<typeof loadMnist>>['train']) {
  const layout = createModelLayout(kind);
  const backend = createCpuBackend(layout);
  const weights = heInitialize(layout, SEED);
  const shard = Uint32Array.from({ length: 4096 }, (_, i) => i);
  const sampler = new MinibatchSampler(shard, BATCH, SEED, 0);
  const computeMs: number[] = [];
  const stepMs = new Map<string, number[]>(CASES.map((c) => [c.label, []]));
  const layerMs = new Map<string, number[]>();
  const referenceMs = new Map<string, number[]>();
  const bytes = new Map<string, number>();
  const entryBytes = new Map<number, { now: number; before: number }>();
  const record = (map: Map<string, number[]>, key: string, ms: number) => map.set(key, [...(map.get(key) ?? []), ms]);

  for (let round = 0; round < rounds + 1; round++) {
    const batch = train.batch(sampler.batch(round));
    const t0 = performance.now();
    const result = await backend.lossAndGradient(weights, batch.pixels, batch.labels, BATCH);
    const compute = performance.now() - t0;
    // Copy the factors and gradient: the backend reuses its buffers on the next call.
    const layers: LayerGradient[] = layerGradients(layout, {
      gradient: result.gradient.slice(),
      factors: new Map([...(result.factors ?? new Map())].map(([k, f]) => [k, { input: f.input.slice(), delta: f.delta.slice(), batch: f.batch }])),
    });
    const warm = round === 0; // the first round compiles; it is not timed
    if (!warm) computeMs.push(compute);
    for (const c of CASES) {
      const input: LayerGradient[] = c.factors ? layers : layers.map(({ layer, shape, values }) => ({ layer, shape, values }));
      const stream = (layer: number) => ({ seed: SEED, worker: 0, round, layer });
      const t = time(() => compressOnCpu(input, c.compression, stream));
      if (!warm) record(stepMs, c.label, t);
      const scheme = SCHEMES[c.compression.scheme];
      let total = 0;
      for (const { layer, shape, values, factors } of input) {
        let sample!: ReturnType<typeof scheme.compress>['sample'];
        const ms = time(() => ({ sample } = scheme.compress(values, shape, c.compression, stream(layer), factors)));
        if (!warm) record(layerMs, `${c.label}|${layer}`, ms);
        total += encodedByteLength(sample);
        if (sample.scheme === 'atomo-entry' && !warm) {
          const e = entryBytes.get(layer) ?? { now: 0, before: 0 };
          entryBytes.set(layer, { now: e.now + encodedByteLength(sample), before: e.before + previousEntryBytes(sample.indices) });
        }
      }
      if (!warm) bytes.set(c.label, (bytes.get(c.label) ?? 0) + total / rounds);
    }
    if (!warm && round <= referenceRounds) {
      for (const { layer, shape, values } of layers) {
        if (shape[0] === 1) continue; // a bias: one atom, nothing to compare
        const [rows, cols] = shape;
        record(
          referenceMs,
          `jacobi|${layer}`,
          time(() => svdJacobi(values, rows, cols)),
        );
        record(
          referenceMs,
          `lowrank|${layer}`,
          time(() => svdLowRank(values, rows, cols)),
        );
        const m = new Matrix(rows, cols);
        for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) m.set(i, j, values[i * cols + j]!);
        record(
          referenceMs,
          `ml-matrix|${layer}`,
          time(() => new SVD(m, { autoTranspose: true })),
        );
      }
    }
  }

  const compute = median(computeMs);
  const stepTable = markdownTable(
    ['scheme (whole step, all layers, with statistics)', 'compress ms', 'compress / gradient compute', 'bytes per step'],
    CASES.map((c) => {
      const ms = median(stepMs.get(c.label)!);
      return [c.label, fmt(ms), `${fmt(ms / compute)}×`, fmt(bytes.get(c.label)!)];
    }),
  );
  const spectralRows = layout.tensors
    .map((tensor, layer) => ({ tensor, layer }))
    .filter(({ tensor }) => tensor.shape[0] > 1)
    .map(({ tensor, layer }) => {
      const worker = median(layerMs.get(`${CASES[1]!.label}|${layer}`)!);
      const previous = median(layerMs.get(`${CASES[2]!.label}|${layer}`)!);
      const jacobi = median(referenceMs.get(`jacobi|${layer}`)!);
      const ml = median(referenceMs.get(`ml-matrix|${layer}`)!);
      const route = spectralRoute(tensor.shape, layouts(layout, layer) ? BATCH : undefined);
      return [
        `${tensor.name} ${tensor.shape[0]}×${tensor.shape[1]}`,
        route,
        fmt(worker),
        fmt(previous),
        fmt(jacobi),
        fmt(ml),
        `${fmt(previous / worker)}×`,
        `${fmt(jacobi / worker)}×`,
        `${fmt(ml / worker)}×`,
      ];
    });
  const spectralTable = markdownTable(
    ['layer', 'route', 'spectral ATOMO ms (worker)', 'previous route ms', 'full Jacobi SVD ms', 'ml-matrix SVD ms', 'vs previous', 'vs Jacobi', 'vs ml-matrix'],
    spectralRows,
  );
  const entryRows = [...entryBytes].map(([layer, e]) => {
    const tensor = layout.tensors[layer]!;
    return [`${tensor.name} ${tensor.shape[0]}×${tensor.shape[1]}`, fmt(e.before / rounds), fmt(e.now / rounds), `${fmt(e.before / e.now)}×`];
  });
  const entryTable = markdownTable(['layer (atomo-entry s=1024)', 'bytes before (float32 per entry)', 'bytes now (τ + 2-bit codes)', 'fewer bytes'], entryRows);
  return { compute, stepTable, spectralTable, entryTable };
}

/** Whether tensor `layer` is a dense weight (its factors reach the compressor). */
function layouts(layout: ReturnType<typeof createModelLayout>, layer: number): boolean {
  return layout.layers.some((l) => l.type === 'dense' && layout.tensors.indexOf(l.weight) === layer);
}

/** Runs the suite for both models and writes its section. */
export async function benchCompress(): Promise<void> {
  const rounds = option('rounds', 8);
  const referenceRounds = Math.min(rounds, option('reference', 2));
  const { train } = await loadMnist(createFileReader());
  const loadBefore = load();
  const started = new Date();
  const sections: string[] = [];
  for (const kind of ['mlp', 'cnn'] as const) {
    const r = await benchModel(kind, rounds, referenceRounds, train);
    console.log(`${kind}: gradient compute ${fmt(r.compute)} ms\n${r.stepTable}\n${r.spectralTable}\n${r.entryTable}`);
    sections.push(
      `### ${kind.toUpperCase()}, batch ${BATCH}: gradient compute (forward + backward) ${fmt(r.compute)} ms per step\n\n${r.stepTable}\n\n` +
        `Spectral ATOMO per layer (the scheme's compress only, no statistics), and full SVDs of the same gradient:\n\n${r.spectralTable}\n\n${r.entryTable}`,
    );
  }
  const command = `npm run bench -- compress${process.argv.includes('--rounds') ? ` --rounds ${rounds}` : ''}`;
  writeSection(
    'compress',
    `## Compression on the CPU against the gradient (\`${command}\`)

Measured ${started.toISOString().slice(0, 16)} UTC in Node ${process.version}, medians over ${rounds} MNIST minibatches
(${referenceRounds} for the full SVDs), the first round untimed; load average ${loadBefore} before, ${load()} after, on a
shared 2-core machine, so compare the ratios (measured in the same run) rather than the milliseconds. "compress" is what a
worker's round spends between the gradient and encoding (the scheme plus the closed-form and realised variance); the
GPU path is in the training section below. Left out: encoding (microseconds), and the bias rows of the SVD table.

${sections.join('\n\n')}`,
  );
}
