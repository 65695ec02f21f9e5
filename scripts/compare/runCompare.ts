/**
 * One comparison, programmatically: every setting × every seed trained one
 * after the other on one in-process aggregator (two cores: side by side
 * would only slow each down), histories kept as JSON, then the report.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
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

/** The --quick comparison: two byte-matched settings, three seeds, a few rounds (a few minutes on 2 cores). */
export const QUICK = { workers: 2, rounds: 6, seeds: [1, 2, 3], evalEvery: 2, only: ['svd-matched', 'qsgd-1'] } as const;

/** Trains what is asked and writes the report; returns the headline table (who reaches 90% first per link). */
export async function runCompare(options: CompareOptions): Promise<{ winners: string; wallSeconds: number; settings: SettingRuns[] }> {
  const started = performance.now();
  const loadAverage = loadavg()[0] ?? 0;
  const entries = compareEntries(DEFAULT_RUN_CONFIG.batchSize);
  const path = (id: string, seed: number) => join(options.outDir, `${id}-seed${seed}.json`);
  mkdirSync(options.outDir, { recursive: true });
  const chosen = options.only === undefined ? entries : entries.filter((e) => options.only!.includes(e.id));
  if (!options.reportOnly) {
    const aggregator = await startLocalAggregator();
    try {
      for (const seed of options.seeds) {
        for (const entry of chosen) {
          const history = await runSwarm(
            {
              workers: options.workers,
              scheme: entry.scheme,
              budget: entry.budget,
              levels: entry.levels,
              bucketSize: entry.bucketSize,
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
          if (options.progress) console.log(`${entry.label}, seed ${seed}: ${history.rounds.length} rounds in ${history.wallSeconds.toFixed(0)} s`);
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
  // A redrawn report states the time the training took, kept beside the histories.
  const timing = join(options.outDir, 'timing.json');
  if (!options.reportOnly) writeFileSync(timing, JSON.stringify({ wallSeconds: (performance.now() - started) / 1000, loadAverage }));
  const recorded = existsSync(timing) ? (JSON.parse(readFileSync(timing, 'utf8')) as { wallSeconds: number; loadAverage: number }) : null;
  const wallSeconds = recorded?.wallSeconds ?? (performance.now() - started) / 1000;
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
      wallSeconds,
      cores: cpus().length,
      loadAverage: recorded?.loadAverage ?? loadAverage,
    },
    options.pngs,
  );
  return { winners, wallSeconds, settings };
}
