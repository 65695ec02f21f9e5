/**
 * `npm run bench -- compress`: what compressing a worker's gradient costs on
 * the CPU, per layer and per scheme, against the gradient's own compute time
 * (forward + backward of the same minibatch), for the MLP and the CNN at
 * batch 32, on real MNIST minibatches at He-initialised weights; and for the
 * MLP once more at a trained model (scripts/bench/trainedModel.ts), whose
 * graded gradients make the factored core's Jacobi take more sweeps.
 *
 * For spectral ATOMO it times, in the same run and on the same gradients:
 * the route a worker takes (factored for dense weights: thin QRs of X and Δ
 * and a batch×batch core SVD, core/linalg/factoredSvd.ts), the full-gradient
 * route it replaced (rank-revealing QR of G, core/linalg/lowRankSvd.ts; the
 * baseline of the ≥ 10× target), the factored SVD with Householder forced on
 * both factors (the route before the Gram route), a full one-sided Jacobi SVD
 * (core/linalg/svd.ts) and ml-matrix's SVD (Golub–Kahan, the bench's only
 * use of that package). For entry-wise ATOMO it counts the bytes of the
 * current encoding (τ + 2-bit codes) against the previous one (a float32 per
 * entry).
 *
 * Timing: --warmup untimed passes over every minibatch and case first (the
 * JIT optimises; a worker's first rounds are slower), then --passes timed
 * passes. Within a pass the gradient's compute runs on every minibatch, then
 * each case runs on every minibatch in a row, as a worker runs one scheme
 * round after round, after a full collection (gc(): the launcher runs Node
 * with --expose-gc) and one untimed step: a case then pays for the garbage
 * collections its own allocations cause, not for those of the case before it.
 * Passes alternate the cases every few hundred milliseconds, so load from
 * other processes still falls on all of them alike. The tables give the wall
 * clock's median over passes × minibatches, and the process's CPU time
 * (process.cpuUsage, every thread) beside the steps. Neither is the step's
 * own cost on a shared machine: the wall clock counts the time the thread
 * waits for a core other jobs hold, and process.cpuUsage counts V8's
 * background threads (concurrent marking and sweeping, compilation), which
 * put a step's CPU time 1.4–3.7 ms above its wall time (docs/design.md, "The CPU step's speed").
 * The targets are judged on the main thread's own CPU time (the kernel's
 * per-thread schedstat) over blocks of steps in a row, gradient compute and
 * compression alike, measured in the same run.
 * Options: --rounds N (minibatches, 8 by default), --warmup N (untimed passes,
 * 4), --passes N (timed passes, 4), --reference N (minibatches for the slow
 * full SVDs, 2), --trained N (rounds of training before the trained model's
 * minibatches, 1000: the default run's maxRounds, about 7 s here).
 */
import { Matrix, SVD } from 'ml-matrix';
import { SCHEMES, spectralRoute, spectralRouteCosts } from '../../core/atomo';
import type { Compression } from '../../core/atomo/types';
import { encodedByteLength } from '../../core/codec';
import { varintLength } from '../../core/codec/varint';
import { type Batch, type Dataset, loadMnist, MinibatchSampler } from '../../core/data';
import { factoredSvd, type FactorQr } from '../../core/linalg/factoredSvd';
import { svdLowRank } from '../../core/linalg/lowRankSvd';
import { rightSubspace, svdRangeFinder } from '../../core/linalg/rangeFinderSvd';
import { svdJacobi } from '../../core/linalg/svd';
import { createCpuBackend, createCpuComputations } from '../../core/model/cpu/backend';
import { heInitialise } from '../../core/model/init';
import type { TrainingBackend } from '../../core/model/backend';
import { createModelLayout, type ModelKind, type ModelLayout } from '../../core/model/layout';
import { compressOnCpu, type LayerGradient } from '../../core/training/compression';
import { createFileReader } from '../../server/data/fileReader';
import { copyFactors, gradientsOn } from './gradients';
import { fmt, loadText, markdownTable, writeSection } from './report';
import { collect as collectOrNothing, median, threadCpuPerCall } from './threadTiming';
import { trainedRounds } from './trainedModel';

const BATCH = 32;
const SEED = 7;

/** A full collection: the bench runs Node with --expose-gc (npm run bench) and refuses to run without it. */
const collect = () => collectOrNothing(true);

function option(name: string, fallback: number): number {
  const args = process.argv.slice(2);
  const index = args.indexOf(`--${name}`);
  const value = index >= 0 ? Number(args[index + 1]) : fallback;
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`--${name} must be a positive integer`);
  return value;
}

/**
 * Milliseconds of one call: of the wall clock (the figure) and of this process's CPU, every thread (user + system;
 * printed, no target).
 */
interface Timing {
  readonly cpu: number;
  readonly wall: number;
}

function time(f: () => unknown): Timing {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  f();
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { cpu: (c.user + c.system) / 1000, wall };
}

async function timeAsync(f: () => Promise<unknown>): Promise<Timing> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await f();
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { cpu: (c.user + c.system) / 1000, wall };
}

interface Case {
  readonly label: string;
  readonly compression: Compression;
  /**
   * Whether the compressor sees the dense layers' factors (the worker's route) or only the gradient (the full-gradient
   * route).
   */
  readonly factors: boolean;
}

const WORKER = 'atomo-svd s=2, worker route';
const PREVIOUS = 'atomo-svd s=2, full-gradient QR (the route before the factored one)';
const CASES: readonly Case[] = [
  { label: 'none (float32)', compression: { scheme: 'none', budget: 2, levels: 1 }, factors: true },
  { label: WORKER, compression: { scheme: 'atomo-svd', budget: 2, levels: 1 }, factors: true },
  { label: PREVIOUS, compression: { scheme: 'atomo-svd', budget: 2, levels: 1 }, factors: false },
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

/** Lists of timings by key. */
class Samples {
  readonly #map = new Map<string, Timing[]>();
  add(key: string, t: Timing): void {
    const list = this.#map.get(key);
    if (list === undefined) this.#map.set(key, [t]);
    else list.push(t);
  }
  /** The median wall time (or CPU time) of `key`'s timings. */
  median(key: string, clock: keyof Timing = 'wall'): number {
    const list = this.#map.get(key);
    return list === undefined ? Number.NaN : median(list.map((t) => t[clock]));
  }
}

/** What a set of cases is timed on: each round's model and minibatch, and the per-layer gradient computed there. */
interface Minibatches {
  readonly backend: TrainingBackend;
  readonly weights: readonly Float32Array[];
  readonly batches: readonly Batch[];
  readonly gradients: readonly (readonly LayerGradient[])[];
  /** The same gradients without their factors, for the cases that take the full-gradient route. */
  readonly stripped: readonly (readonly LayerGradient[])[];
}

async function minibatches(
  layout: ModelLayout,
  weights: readonly Float32Array[],
  batches: readonly Batch[],
): Promise<Minibatches> {
  const backend = createCpuBackend(layout);
  const gradients = await gradientsOn(backend, layout, weights, batches, BATCH);
  const stripped = gradients.map((layers) => layers.map(({ layer, shape, values }) => ({ layer, shape, values })));
  return { backend, weights, batches, gradients, stripped };
}

const inputOf = (set: Minibatches, c: Case, round: number): readonly LayerGradient[] =>
  (c.factors ? set.gradients : set.stripped)[round]!;
const stream = (round: number) => (layer: number) => ({ seed: SEED, worker: 0, round, layer });
const computeOn = (set: Minibatches, round: number) => {
  const batch = set.batches[round]!;
  return set.backend.lossAndGradient(set.weights[round]!, batch.pixels, batch.labels, BATCH);
};

/**
 * `warmup` untimed then `passes` timed passes, each a full collection, the gradient's compute on every minibatch
 * ('compute'), then each case on every minibatch in a row after a collection and one untimed step ('step|<label>');
 * `afterStep` takes a case's further measurements of the same input right after its step, `afterPass` those of the
 * pass.
 */
async function timePasses(
  set: Minibatches,
  cases: readonly Case[],
  warmup: number,
  passes: number,
  timings: Samples,
  afterStep: (c: Case, round: number, input: readonly LayerGradient[], timed: boolean) => void = () => {},
  afterPass: (timed: boolean) => void = () => {},
): Promise<void> {
  const rounds = set.batches.length;
  const pass = async (timed: boolean) => {
    collect();
    await computeOn(set, 0);
    for (let round = 0; round < rounds; round++) {
      const compute = await timeAsync(() => computeOn(set, round));
      if (timed) timings.add('compute', compute);
    }
    for (const c of cases) {
      collect();
      compressOnCpu(inputOf(set, c, 0), c.compression, stream(0));
      for (let round = 0; round < rounds; round++) {
        const input = inputOf(set, c, round);
        const ms = time(() => compressOnCpu(input, c.compression, stream(round)));
        if (timed) timings.add(`step|${c.label}`, ms);
        afterStep(c, round, input, timed);
      }
    }
    afterPass(timed);
  };
  for (let p = 0; p < warmup; p++) await pass(false);
  for (let p = 0; p < passes; p++) await pass(true);
}

/** The main thread's CPU ms per gradient compute, over every minibatch in a row. */
const threadCompute = (set: Minibatches, timings: Samples) =>
  threadCpuPerCall(set.batches.length, timings.median('compute'), (round) => computeOn(set, round));

/** The main thread's CPU ms per step of the case labelled `label`, over every minibatch in a row. */
function threadStep(set: Minibatches, timings: Samples, label: string): Promise<number> {
  const c = CASES.find((x) => x.label === label)!;
  return threadCpuPerCall(set.batches.length, timings.median(`step|${label}`), (round) =>
    compressOnCpu(inputOf(set, c, round), c.compression, stream(round)),
  );
}

/**
 * The one-sided Jacobi sweeps of each factored layer's core SVD, one per minibatch (untimed; the call the scheme
 * makes).
 */
function coreSweeps(set: Minibatches): Map<number, number[]> {
  const sweeps = new Map<number, number[]>();
  for (const layers of set.gradients) {
    for (const { layer, shape, factors } of layers) {
      if (factors === undefined || spectralRoute(shape, factors.batch) !== 'factored') continue;
      sweeps.set(layer, [...(sweeps.get(layer) ?? []), factoredSvd(factors, shape[0], shape[1]).materialise().sweeps]);
    }
  }
  return sweeps;
}

/** "dense1.weight 4.25 (3–6)": each factored layer's mean sweeps and their range. */
function sweepsText(layout: ModelLayout, sweeps: ReadonlyMap<number, readonly number[]>): string {
  return [...sweeps]
    .map(
      ([layer, counts]) =>
        `${layout.tensors[layer]!.name} ${fmt(counts.reduce((a, b) => a + b, 0) / counts.length)} ` +
        `(${Math.min(...counts)}–${Math.max(...counts)})`,
    )
    .join(', ');
}

/** The cases timed at a trained model: the worker's spectral step, and float32 as the floor. */
/** The one table of the section: every case's whole step, per model. */
const STEP_HEADER = [
  'model (gradient compute, wall)',
  'scheme (whole step, with statistics)',
  'compress wall ms',
  '÷ compute (wall)',
  'full-gradient route ÷ this',
  'CPU ms, every thread',
  'main thread CPU ms (÷ compute)',
  'bytes per step',
];

const TRAINED_CASES = CASES.filter((c) => c.label === WORKER || c.compression.scheme === 'none');

/**
 * The MLP's gradient compute and the worker's spectral step on the minibatches of the `rounds` rounds after
 * `trainedFor` rounds of the default run (scripts/bench/trainedModel.ts), timed as the He-initialised table is.
 */
async function benchTrained(
  trainedFor: number,
  rounds: number,
  warmup: number,
  passes: number,
  train: Dataset,
  atInit: ReadonlyMap<number, readonly number[]>,
) {
  const layout = createModelLayout('mlp');
  const trained = await trainedRounds(layout, train, trainedFor, rounds);
  const set = await minibatches(
    layout,
    trained.rounds.map((r) => r.weights),
    trained.rounds.map((r) => r.batch),
  );
  const timings = new Samples();
  await timePasses(set, TRAINED_CASES, warmup, passes, timings);
  const compute = timings.median('compute');
  const thread = { compute: await threadCompute(set, timings), worker: await threadStep(set, timings, WORKER) };
  const rows = TRAINED_CASES.map((c) => {
    const ms = timings.median(`step|${c.label}`);
    return [
      `MLP at round ${trainedFor} (compute ${fmt(compute)} ms)`,
      c.label,
      fmt(ms),
      `${fmt(ms / compute)}×`,
      '',
      fmt(timings.median(`step|${c.label}`, 'cpu')),
      c.label === WORKER ? `${fmt(thread.worker)} (${fmt(thread.worker / thread.compute)}×)` : '',
      '',
    ];
  });
  const table = markdownTable(STEP_HEADER, rows);
  const line =
    `Main thread's CPU time per step (as above): gradient ` +
    `compute ${fmt(thread.compute)} ms; ${WORKER} ${fmt(thread.worker)} ms ` +
    `(${fmt(thread.worker / thread.compute)}× compute). Jacobi ` +
    `sweeps of the factored core per minibatch, mean (range): ` +
    `${sweepsText(layout, coreSweeps(set))} at the trained model; ` +
    `${sweepsText(layout, atInit)} at He-initialised weights.`;
  return {
    heading:
      `### MLP at a trained model (round ${trainedFor}), batch ${BATCH}: gradient ` +
      `compute ${fmt(compute)} ms wall (${fmt(timings.median('compute', 'cpu'))} ms CPU) per step`,
    trainingSeconds: trained.seconds,
    rows,
    table,
    line,
  };
}

async function benchModel(
  kind: ModelKind,
  rounds: number,
  warmup: number,
  passes: number,
  referenceRounds: number,
  train: Awaited<ReturnType<typeof loadMnist>>['train'],
) {
  const layout = createModelLayout(kind);
  const weights = heInitialise(layout, SEED);
  const shard = Uint32Array.from({ length: 4096 }, (_, i) => i);
  const sampler = new MinibatchSampler(shard, BATCH, SEED, 0);
  const batches = Array.from({ length: rounds }, (_, round) => train.batch(sampler.batch(round)));
  const set = await minibatches(
    layout,
    batches.map(() => weights),
    batches,
  );
  const { gradients } = set;
  // Every weight's factors, whatever its route (a convolution's im2col factors too), for the route table.
  const everyFactor = createCpuComputations(layout, 'all');
  const allFactors = batches.slice(0, referenceRounds + 1).map((batch) => {
    const { factors } = everyFactor.lossAndGradient(weights, batch.pixels, batch.labels, BATCH);
    return copyFactors(factors);
  });
  const timings = new Samples();
  const bytes = new Map<string, number>();
  const entryBytes = new Map<number, { now: number; before: number }>();
  const qrRoutes = new Map<number, Map<string, number>>();

  // The scheme's compress alone, layer by layer, and the bytes, on each step's input right after the step.
  const afterStep = (c: Case, round: number, input: readonly LayerGradient[], timed: boolean) => {
    const scheme = SCHEMES[c.compression.scheme];
    let total = 0;
    for (const { layer, shape, values, factors } of input) {
      let sample!: ReturnType<typeof scheme.compress>['sample'];
      const layerMs = time(
        () => ({ sample } = scheme.compress(values, shape, c.compression, stream(round)(layer), factors)),
      );
      if (timed) timings.add(`${c.label}|${layer}`, layerMs);
      total += encodedByteLength(sample);
      if (sample.scheme === 'atomo-entry' && timed) {
        const e = entryBytes.get(layer) ?? { now: 0, before: 0 };
        entryBytes.set(layer, {
          now: e.now + encodedByteLength(sample),
          before: e.before + previousEntryBytes(sample.indices),
        });
      }
    }
    if (timed) bytes.set(c.label, (bytes.get(c.label) ?? 0) + total / (rounds * passes));
  };
  const afterPass = (timed: boolean) => {
    for (let round = 0; round < rounds; round++) {
      const layers = gradients[round]!;
      // The factored SVD alone, with the QR each factor takes by default and with Householder forced on both.
      for (const { layer, shape, factors } of layers) {
        if (factors === undefined || spectralRoute(shape, factors.batch) !== 'factored') continue;
        for (const qr of ['default', 'householder'] as const) {
          let taken: readonly [FactorQr, FactorQr] = ['householder', 'householder'];
          const ms = time(
            () => ({ qr: taken } = factoredSvd(factors, shape[0], shape[1], qr === 'default' ? {} : { qr })),
          );
          if (!timed) continue;
          timings.add(`factored ${qr}|${layer}`, ms);
          if (qr !== 'default') continue;
          const counts = qrRoutes.get(layer) ?? new Map<string, number>();
          counts.set(taken.join(' + '), (counts.get(taken.join(' + ')) ?? 0) + 1);
          qrRoutes.set(layer, counts);
        }
      }
    }
  };
  await timePasses(set, CASES, warmup, passes, timings, afterStep, afterPass);
  // Each route forced on each weight layer (the range finder warm-started from the minibatch before's subspace),
  // on minibatches 1 … referenceRounds: median of three calls after three untimed ones.
  const routeRank = new Map<number, number>();
  for (let round = 1; round <= Math.min(referenceRounds, rounds - 1); round++) {
    for (const { layer, shape, values } of gradients[round]!) {
      if (shape[0] === 1) continue;
      const [rows, cols] = shape;
      const previous = svdLowRank(gradients[round - 1]![layer]!.values, rows, cols);
      routeRank.set(layer, previous.rank);
      const start = rightSubspace(previous);
      const factors = allFactors[round]!.get(layer)!;
      const timed = (key: string, f: () => unknown) => {
        for (let w = 0; w < 3; w++) f();
        const three = [0, 1, 2].map(() => time(f));
        timings.add(key, { cpu: median(three.map((t) => t.cpu)), wall: median(three.map((t) => t.wall)) });
      };
      timed(`route direct|${layer}`, () => svdLowRank(values, rows, cols));
      timed(`route factored|${layer}`, () => factoredSvd(factors, rows, cols));
      if (svdRangeFinder(values, rows, cols, start) !== null)
        timed(`route range-finder|${layer}`, () => svdRangeFinder(values, rows, cols, start));
    }
  }
  for (let round = 0; round < referenceRounds; round++) {
    for (const { layer, shape, values } of gradients[round]!) {
      if (shape[0] === 1) continue; // a bias: one atom, nothing to compare
      const [rows, cols] = shape;
      timings.add(
        `jacobi|${layer}`,
        time(() => svdJacobi(values, rows, cols)),
      );
      const m = new Matrix(rows, cols);
      for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) m.set(i, j, values[i * cols + j]!);
      timings.add(
        `ml-matrix|${layer}`,
        time(() => new SVD(m, { autoTranspose: true })),
      );
      timings.add(
        `lowrank|${layer}`,
        time(() => svdLowRank(values, rows, cols)),
      );
    }
  }

  const compute = timings.median('compute');
  const thread = {
    compute: await threadCompute(set, timings),
    worker: await threadStep(set, timings, WORKER),
    previous: await threadStep(set, timings, PREVIOUS),
  };
  const threadLine =
    `Main thread's CPU time per step (the kernel's ` +
    `\`/proc/thread-self/schedstat\` over blocks of ≥ 0.5 s of steps in a row): ` +
    `gradient compute ${fmt(thread.compute)} ms; ${WORKER} ${fmt(thread.worker)} ms ` +
    `(${fmt(thread.worker / thread.compute)}× compute); ` +
    `full-gradient route ${fmt(thread.previous)} ms (${fmt(thread.previous / thread.worker)}× the worker route).`;
  const previousStep = timings.median(`step|${PREVIOUS}`);
  const modelCell = `${kind.toUpperCase()} (compute ${fmt(compute)} ms)`;
  const threadCell = (label: string) =>
    label === WORKER
      ? `${fmt(thread.worker)} (${fmt(thread.worker / thread.compute)}×)`
      : label === PREVIOUS
        ? `${fmt(thread.previous)} (${fmt(thread.previous / thread.compute)}×)`
        : '';
  const stepRows = CASES.map((c) => {
    const ms = timings.median(`step|${c.label}`);
    return [
      modelCell,
      c.label,
      fmt(ms),
      `${fmt(ms / compute)}×`,
      c.compression.scheme === 'atomo-svd' ? `${fmt(previousStep / ms)}×` : '',
      fmt(timings.median(`step|${c.label}`, 'cpu')),
      threadCell(c.label),
      fmt(bytes.get(c.label)!),
    ];
  });
  const stepTable = markdownTable(STEP_HEADER, stepRows);
  const spectralRows = layout.tensors
    .map((tensor, layer) => ({ tensor, layer }))
    .filter(({ tensor }) => tensor.shape[0] > 1)
    .map(({ tensor, layer }) => {
      const worker = timings.median(`${WORKER}|${layer}`);
      const previous = timings.median(`${PREVIOUS}|${layer}`);
      const jacobi = timings.median(`jacobi|${layer}`);
      const ml = timings.median(`ml-matrix|${layer}`);
      const route = spectralRoute(tensor.shape, gradients[0]![layer]!.factors?.batch);
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
    [
      'layer',
      'route',
      'spectral ATOMO ms (worker route)',
      'full-gradient route ms',
      'full Jacobi SVD ms',
      'ml-matrix SVD ms',
      'vs full-gradient route',
      'vs Jacobi',
      'vs ml-matrix',
    ],
    spectralRows,
  );
  const factoredRows = [...qrRoutes].map(([layer, counts]) => {
    const tensor = layout.tensors[layer]!;
    const checked = timings.median(`factored default|${layer}`);
    const householder = timings.median(`factored householder|${layer}`);
    const taken = [...counts].map(([route, n]) => `${route} (${n}/${rounds * passes})`).join(', ');
    return [
      `${tensor.name} ${tensor.shape[0]}×${tensor.shape[1]}`,
      taken,
      fmt(checked),
      fmt(householder),
      `${fmt(householder / checked)}×`,
    ];
  });
  const factoredTable = markdownTable(
    [
      'layer (factored SVD only)',
      'QR taken (input + delta)',
      'default ms (Gram where checked accurate)',
      'Householder forced ms',
      'speed-up',
    ],
    factoredRows,
  );
  const routeRows = [...routeRank].map(([layer, rank]) => {
    const tensor = layout.tensors[layer]!;
    const inner = allFactors[1]!.get(layer)!.batch;
    const costs = spectralRouteCosts(tensor.shape, inner, rank);
    const measured = (route: string) => timings.median(`route ${route}|${layer}`);
    const cell = (route: 'direct' | 'factored' | 'range-finder') =>
      Number.isFinite(costs[route])
        ? `${fmt(costs[route] / 1e6)} / ${Number.isNaN(measured(route)) ? '—' : fmt(measured(route))}`
        : `— / ${fmt(measured(route))}`;
    return [
      `${tensor.name} ${tensor.shape[0]}×${tensor.shape[1]}`,
      String(inner),
      String(rank),
      spectralRoute(tensor.shape, inner, rank),
      cell('direct'),
      cell('factored'),
      Number.isFinite(costs['range-finder'])
        ? cell('range-finder')
        : '— (the sketch would need min(rows, cols) columns)',
    ];
  });
  const routeTable = markdownTable(
    [
      'layer',
      "factors' inner K",
      'rank',
      'route chosen',
      'direct: model Mflop / ms',
      'factored: model Mflop / ms',
      'range finder (warm): model Mflop / ms',
    ],
    routeRows,
  );
  const entryRows = [...entryBytes].map(([layer, e]) => {
    const tensor = layout.tensors[layer]!;
    const n = rounds * passes;
    return [
      `${tensor.name} ${tensor.shape[0]}×${tensor.shape[1]}`,
      fmt(e.before / n),
      fmt(e.now / n),
      `${fmt(e.before / e.now)}×`,
    ];
  });
  const entryTable = markdownTable(
    ['layer (atomo-entry s=1024)', 'bytes before (float32 per entry)', 'bytes now (τ + 2-bit codes)', 'fewer bytes'],
    entryRows,
  );
  return {
    compute,
    computeCpu: timings.median('compute', 'cpu'),
    stepRows,
    stepTable,
    threadLine,
    spectralTable,
    factoredTable: factoredRows.length > 0 ? factoredTable : '',
    routeTable,
    entryTable,
    sweeps: coreSweeps(set),
  };
}

/** Runs the suite for both models and writes its section. */
export async function benchCompress(): Promise<void> {
  const rounds = option('rounds', 8);
  const warmup = option('warmup', 4);
  const passes = option('passes', 4);
  const referenceRounds = Math.min(rounds, option('reference', 2));
  const trainedFor = option('trained', 1000);
  const { train } = await loadMnist(createFileReader());
  const loadBefore = loadText();
  const rows: string[][] = [];
  let sweeps = '';
  for (const kind of ['mlp', 'cnn'] as const) {
    const r = await benchModel(kind, rounds, warmup, passes, referenceRounds, train);
    const tables = [r.stepTable, r.threadLine, r.spectralTable, r.factoredTable, r.routeTable, r.entryTable].filter(
      (t) => t !== '',
    );
    console.log(`${kind}: gradient compute ${fmt(r.compute)} ms wall (${fmt(r.computeCpu)} CPU)\n${tables.join('\n')}`);
    rows.push(...r.stepRows);
    if (kind !== 'mlp') continue;
    const t = await benchTrained(trainedFor, rounds, warmup, passes, train, r.sweeps);
    console.log(`mlp at round ${trainedFor} (trained in ${fmt(t.trainingSeconds)} s)\n${t.table}\n${t.line}`);
    rows.push(...t.rows);
    sweeps = t.line.slice(t.line.indexOf('Jacobi sweeps'));
  }
  const flags = ['rounds', 'warmup', 'passes', 'reference', 'trained']
    .filter((name) => process.argv.includes(`--${name}`))
    .map((name) => ` --${name} ${option(name, 1)}`);
  writeSection('compress', {
    title: 'Compression on the CPU against the gradient',
    command: `npm run bench -- compress${flags.join('')}`,
    loadBefore,
    how: [
      `Each case's whole step (all layers, closed-form and realised variance) on ${rounds} MNIST minibatches, batch ` +
        `${BATCH}: ${warmup} untimed passes, then ${passes} timed ` +
        `passes alternating the cases, each after \`gc()\` and ` +
        'an untimed step; medians. The trained MLP: the default ' +
        'run trained by one worker (scripts/bench/trainedModel.ts).',
      "Wall clock; CPU of every thread (`process.cpuUsage`, V8's background threads included); the main thread's own " +
        'CPU (`/proc/thread-self/schedstat`, blocks of ≥ 0.5 s), the clock the targets in docs/design.md use.',
      `"full-gradient route": spectral ATOMO by a QR of the whole ` +
        `gradient, the route before the factored one. ${sweeps}`,
    ],
    header: STEP_HEADER,
    rows,
  });
}
