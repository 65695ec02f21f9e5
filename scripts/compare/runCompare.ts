/**
 * One comparison, programmatically: every setting × every seed trained one
 * after the other on one in-process aggregator (two cores: side by side
 * would only slow each down), histories kept as JSON, then the report.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import type { DatasetName } from '../../core/data/datasets';
import type { ModelKind } from '../../core/model';
import { DEFAULT_RUN_CONFIG } from '../../core/schema';
import { startLocalAggregator } from '../swarm/aggregator';
import type { SwarmHistory } from '../swarm/history';
import { runSwarm } from '../swarm/runSwarm';
import type { SettingRuns } from './plots';
import { writeReport } from './report';
import { compareEntries } from './schemes';
import { COMPARE_LINKS, evalPoints } from './stats';

/** What to compare. */
export interface CompareOptions {
  /** The model every setting trains (the MLP by default). */
  readonly model?: ModelKind;
  /** The images every setting trains on (MNIST by default). */
  readonly dataset?: DatasetName;
  readonly workers: number;
  readonly rounds: number;
  readonly seeds: readonly number[];
  readonly evalEvery: number;
  /** Setting ids to train (all when absent); the report covers every setting with histories. */
  readonly only?: readonly string[];
  readonly outDir: string;
  readonly reportPath: string;
  /** Redraw from the histories in outDir without training. */
  readonly reportOnly: boolean;
  readonly pngs: boolean;
  readonly progress: boolean;
  /** The command line, for the report. */
  readonly command: string;
}

/** One training run's cost: its wall time, and the 1-minute load average when it started and ended. */
interface RunTiming {
  readonly wallSeconds: number;
  readonly loadStart: number;
  readonly loadEnd: number;
}

/** The --quick comparison: two byte-matched settings, three seeds, a few rounds (a few minutes on 2 cores). */
export const QUICK = {
  workers: 2,
  rounds: 6,
  seeds: [1, 2, 3],
  evalEvery: 2,
  only: ['svd-matched', 'qsgd-1'],
} as const;

/** Trains what is asked and writes the report; returns the headline table (who reaches 90% first per link). */
export async function runCompare(
  options: CompareOptions,
): Promise<{ winners: string; wallSeconds: number; settings: SettingRuns[] }> {
  const started = performance.now();
  const model = options.model ?? 'mlp';
  const entries = compareEntries(model, DEFAULT_RUN_CONFIG.batchSize);
  // Each run's own wall time and the load average around it, kept beside the histories and merged, so a
  // comparison trained in several invocations (one setting at a time) still reports what it cost.
  const timingPath = join(options.outDir, 'timings.json');
  const readTimings = (): Record<string, RunTiming> =>
    existsSync(timingPath) ? (JSON.parse(readFileSync(timingPath, 'utf8')) as Record<string, RunTiming>) : {};
  const path = (id: string, seed: number) => join(options.outDir, `${id}-seed${seed}.json`);
  mkdirSync(options.outDir, { recursive: true });
  const chosen = options.only === undefined ? entries : entries.filter((e) => options.only!.includes(e.id));
  if (!options.reportOnly) {
    const aggregator = await startLocalAggregator();
    try {
      for (const seed of options.seeds) {
        for (const entry of chosen) {
          const loadStart = loadavg()[0] ?? 0;
          const runStarted = performance.now();
          const history = await runSwarm(
            {
              workers: options.workers,
              scheme: entry.scheme,
              budget: entry.budget,
              levels: entry.levels,
              bucketSize: entry.bucketSize,
              ...(entry.byteBudget === undefined ? {} : { byteBudget: entry.byteBudget }),
              model,
              ...(options.dataset === undefined ? {} : { dataset: options.dataset }),
              downlink: entry.downlink,
              downlinkBudget: entry.downlinkBudget,
              rounds: options.rounds,
              seed,
              evalEvery: options.evalEvery,
              backend: 'cpu',
              name: `${entry.label} seed ${seed}`,
              out: path(entry.id, seed),
              progress: options.progress,
            },
            aggregator,
          );
          const timings = readTimings();
          timings[`${entry.id}-seed${seed}`] = {
            wallSeconds: (performance.now() - runStarted) / 1000,
            loadStart,
            loadEnd: loadavg()[0] ?? 0,
          };
          writeFileSync(timingPath, JSON.stringify(timings, null, 1));
          if (options.progress)
            console.log(
              `${entry.label}, seed ${seed}: ${history.rounds.length} rounds in ${history.wallSeconds.toFixed(0)} s`,
            );
        }
      }
    } finally {
      await aggregator.close();
    }
  }
  const settings: SettingRuns[] = entries
    .map((entry) => ({
      entry,
      seeds: options.seeds
        .filter((seed) => existsSync(path(entry.id, seed)))
        .map((seed) => evalPoints(JSON.parse(readFileSync(path(entry.id, seed), 'utf8')) as SwarmHistory)),
    }))
    .filter((s) => s.seeds.length > 0);
  if (settings.length === 0) throw new Error(`no histories in ${options.outDir}: run the comparison first`);
  // The report states what the training of the histories it shows took, and the load around it.
  const timings = readTimings();
  const shown = settings
    .flatMap(({ entry }) => options.seeds.map((seed) => timings[`${entry.id}-seed${seed}`]))
    .filter((t): t is RunTiming => t !== undefined);
  const wallSeconds =
    shown.length > 0 ? shown.reduce((sum, t) => sum + t.wallSeconds, 0) : (performance.now() - started) / 1000;
  const loads = shown.flatMap((t) => [t.loadStart, t.loadEnd]);
  const loadAverage =
    loads.length > 0
      ? { min: Math.min(...loads), max: Math.max(...loads) }
      : { min: loadavg()[0] ?? 0, max: loadavg()[0] ?? 0 };
  const winners = await writeReport(
    options.reportPath,
    settings,
    COMPARE_LINKS,
    {
      command: options.command,
      workers: options.workers,
      rounds: options.rounds,
      evalEvery: options.evalEvery,
      seeds: options.seeds,
      batchSize: DEFAULT_RUN_CONFIG.batchSize,
      learningRate: DEFAULT_RUN_CONFIG.learningRate,
      momentum: DEFAULT_RUN_CONFIG.momentum,
      model,
      wallSeconds,
      runs: shown.length,
      cores: cpus().length,
      loadAverage,
    },
    options.pngs,
  );
  return { winners, wallSeconds, settings };
}
