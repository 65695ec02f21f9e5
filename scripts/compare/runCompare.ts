/**
 * One comparison, programmatically: each setting's steps calibrated on the
 * idle main thread (scripts/compare/calibration.ts, kept in
 * calibration.json), each setting's learning rate tuned on
 * the tuning seed (scripts/compare/tuning.ts, kept in tuning.json), then
 * every setting × every seed trained one after the other on one in-process
 * aggregator (two cores: side by side would only slow each down), histories
 * kept as JSON, then the report.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, relative } from 'node:path';
import type { DatasetName } from '../../core/data/datasets';
import type { ModelKind } from '../../core/model';
import { DEFAULT_RUN_CONFIG, applyRunConfigPatch, type AggregationRule, type DownlinkMode } from '../../core/schema';
import { startLocalAggregator } from '../swarm/aggregator';
import type { SwarmHistory } from '../swarm/history';
import type { SwarmOptions } from '../swarm/options';
import { runPatch, runSwarm } from '../swarm/runSwarm';
import { calibrate, calibrationOf, readCalibrations } from './calibration';
import type { SettingAggregation, SettingRuns } from './plots';
import { writeReport } from './report';
import { settingVariance } from './varianceTable';
import { compareEntries, type CompareEntry } from './schemes';
import { COMPARE_LINKS, evalPoints, meanRoundParts, settingTimes } from './stats';
import { COMPARE_EVAL_EXAMPLES, COMPARE_ROUND_DEADLINE_MS, TASK_TARGETS, headlineTarget } from './task';
import { chooseLearningRate, tuningRule, tuningTrial, type TuningRecord } from './tuning';

/** What to compare. */
export interface CompareOptions {
  /** The model every setting trains (the MLP by default). */
  readonly model?: ModelKind;
  /** The images every setting trains on (MNIST by default). */
  readonly dataset?: DatasetName;
  /** How every setting's model comes down unless it names its own (the server's default `auto` when absent). */
  readonly downlink?: DownlinkMode;
  readonly workers: number;
  readonly rounds: number;
  readonly seeds: readonly number[];
  readonly evalEvery: number;
  /**
   * The tuning: each setting trains once per learning rate on `seed` (not one of `seeds`) and keeps the best; null
   * trains every setting at `learningRate`.
   */
  readonly tuning: { readonly seed: number; readonly learningRates: readonly number[] } | null;
  /**
   * A folder whose tuning.json gives each setting its learning rate instead of tuning here (a task with more workers
   * reusing the tuning of the same model with fewer: the tuning's cost grows with the workers).
   */
  readonly tuningFrom?: string;
  /** The learning rate without tuning (the server's default when absent). */
  readonly learningRate?: number;
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

/**
 * The --quick comparison: a sweep of two spectral budgets and TernGrad, each tuned between two learning rates on
 * seed 0, then five seeds of a few rounds (a few minutes on 2 cores). Nobody reaches 90% in 6 rounds: the tables show
 * censored runs.
 */
export const QUICK = {
  workers: 2,
  rounds: 6,
  seeds: [1, 2, 3, 4, 5],
  evalEvery: 2,
  only: ['svd-1', 'svd-4', 'terngrad'],
  tuning: { seed: 0, learningRates: [0.05, 0.2] },
} as const;

/** Accuracy points below a target within which the server evaluates every round (RunConfig.evalNear). */
export const EVAL_NEAR_WITHIN = 0.03;

/** Over every round of a setting's histories: the rules they record, the estimates combined and clipped. */
export function aggregationOf(histories: readonly SwarmHistory[]): SettingAggregation {
  const rounds = histories.flatMap((h) => h.rounds);
  const recorded = rounds.flatMap((r) => (r.aggregation === undefined ? [] : [r.aggregation]));
  return {
    rules: [...new Set(recorded.map((a) => JSON.stringify(a.rule)))].map((r) => JSON.parse(r) as AggregationRule),
    rounds: rounds.length,
    recorded: recorded.length,
    estimates: rounds.reduce((sum, r) => sum + r.contributors, 0),
    shortRounds: histories.reduce((sum, h) => sum + h.rounds.filter((r) => r.contributors < h.workers).length, 0),
    clipped: recorded.reduce((sum, a) => sum + a.clipped, 0),
    dropped: recorded.reduce((most, a) => Math.max(most, a.dropped), 0),
  };
}

/**
 * The records of `chosen` in `from`/tuning.json, written into this comparison's `tuningPath` (so its report says
 * where each rate came from); throws naming the settings it lacks.
 */
function reusedTuning(from: string, chosen: readonly CompareEntry[], tuningPath: string): Record<string, TuningRecord> {
  const source = join(from, 'tuning.json');
  if (!existsSync(source)) throw new Error(`--tuning-from: no ${source}; run that comparison with its tuning first`);
  const records = JSON.parse(readFileSync(source, 'utf8')) as Record<string, TuningRecord>;
  const missing = chosen.filter((e) => records[e.id] === undefined).map((e) => e.id);
  if (missing.length > 0) throw new Error(`--tuning-from: ${source} has no tuning of ${missing.join(', ')}`);
  const here = existsSync(tuningPath)
    ? (JSON.parse(readFileSync(tuningPath, 'utf8')) as Record<string, TuningRecord>)
    : {};
  for (const e of chosen) here[e.id] = records[e.id]!;
  writeFileSync(tuningPath, JSON.stringify(here, null, 1));
  return records;
}

/**
 * Trains what is asked and writes the report; returns the headline table (who reaches the task's headline target
 * first, per network).
 */
export async function runCompare(
  options: CompareOptions,
): Promise<{ winners: string; wallSeconds: number; settings: SettingRuns[] }> {
  const started = performance.now();
  const model = options.model ?? 'mlp';
  const dataset = options.dataset ?? 'mnist';
  const entries = compareEntries(model, DEFAULT_RUN_CONFIG.batchSize, options.downlink);
  const targets = TASK_TARGETS[dataset];
  const target = headlineTarget(dataset);
  // Each run's own wall time and the load average around it, kept beside the histories and merged, so a
  // comparison trained in several invocations (one setting at a time) still reports what it cost.
  const timingPath = join(options.outDir, 'timings.json');
  const readTimings = (): Record<string, RunTiming> =>
    existsSync(timingPath) ? (JSON.parse(readFileSync(timingPath, 'utf8')) as Record<string, RunTiming>) : {};
  const path = (id: string, seed: number) => join(options.outDir, `${id}-seed${seed}.json`);
  // The tuning's histories live apart, so that no reported seed's file is ever one of them.
  const tuningHistoryPath = (id: string, lr: number, seed: number) =>
    join(options.outDir, 'tuning', `${id}-lr${lr}-seed${seed}.json`);
  const timingKey = (file: string) => relative(options.outDir, file).replace(/\.json$/, '');
  mkdirSync(options.outDir, { recursive: true });
  const chosen = options.only === undefined ? entries : entries.filter((e) => options.only!.includes(e.id));
  const tuningPath = join(options.outDir, 'tuning.json');
  const readTuning = (): Record<string, TuningRecord> =>
    existsSync(tuningPath) ? (JSON.parse(readFileSync(tuningPath, 'utf8')) as Record<string, TuningRecord>) : {};
  // One training run's swarm: the setting on `seed` at `learningRate` (the server's default when undefined).
  const swarmOptions = (
    entry: CompareEntry,
    seed: number,
    learningRate: number | undefined,
    out: string | undefined,
  ): SwarmOptions => ({
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
    aggregation: entry.aggregation,
    ...(learningRate === undefined ? {} : { learningRate }),
    // Every round just below a target, so rounds to it are exact to the round there.
    overrides: {
      evalNear: { targets: [...targets], within: EVAL_NEAR_WITHIN },
      evalExamples: COMPARE_EVAL_EXAMPLES,
      roundDeadlineMs: COMPARE_ROUND_DEADLINE_MS,
      ...entry.overrides,
    },
    backend: 'cpu',
    name: `${entry.label} seed ${seed}`,
    ...(out === undefined ? {} : { out }),
    progress: options.progress,
  });
  if (!options.reportOnly) {
    // Before any worker thread runs: the model's compute and each setting's compression and encoding on this idle
    // main thread, on the configuration its runs get (the first seed's).
    const calibrating = performance.now();
    await calibrate(
      options.outDir,
      { model, dataset, batchSize: DEFAULT_RUN_CONFIG.batchSize, seed: options.seeds[0] ?? 1 },
      chosen.map((entry) => ({
        id: entry.id,
        compression: applyRunConfigPatch(
          DEFAULT_RUN_CONFIG,
          runPatch(swarmOptions(entry, options.seeds[0] ?? 1, undefined, undefined)),
        ),
      })),
    );
    if (options.progress)
      console.log(`calibrated ${chosen.length} settings in ${((performance.now() - calibrating) / 1000).toFixed(1)} s`);
    const aggregator = await startLocalAggregator();
    // One training run, timed, with the load around it kept in timings.json under its file's name.
    const train = async (entry: CompareEntry, seed: number, learningRate: number | undefined, out: string) => {
      const loadStart = loadavg()[0] ?? 0;
      const runStarted = performance.now();
      const history = await runSwarm(swarmOptions(entry, seed, learningRate, out), aggregator);
      const timings = readTimings();
      timings[timingKey(out)] = {
        wallSeconds: (performance.now() - runStarted) / 1000,
        loadStart,
        loadEnd: loadavg()[0] ?? 0,
      };
      writeFileSync(timingPath, JSON.stringify(timings, null, 1));
      if (options.progress)
        console.log(
          `${entry.label}, seed ${seed}${learningRate === undefined ? '' : `, lr ${learningRate}`}: ` +
            `${history.rounds.length} rounds in ${history.wallSeconds.toFixed(0)} s`,
        );
      return history;
    };
    try {
      const learningRates = new Map<string, number | undefined>();
      const tuning = options.tuning;
      const reused = options.tuningFrom === undefined ? null : reusedTuning(options.tuningFrom, chosen, tuningPath);
      for (const entry of chosen) {
        if (reused !== null) {
          learningRates.set(entry.id, reused[entry.id]!.learningRate);
          continue;
        }
        if (tuning === null) {
          learningRates.set(entry.id, options.learningRate);
          continue;
        }
        if (options.seeds.includes(tuning.seed))
          throw new Error(`the tuning seed ${tuning.seed} is one of the reported seeds: choose another`);
        // A record from the same tuning (seed, rounds, workers, candidates) is reused, not trained again.
        const known = readTuning()[entry.id];
        const same =
          known !== undefined &&
          known.seed === tuning.seed &&
          known.rounds === options.rounds &&
          known.workers === options.workers &&
          known.trials.map((t) => t.learningRate).join() === tuning.learningRates.join();
        if (same) {
          learningRates.set(entry.id, known.learningRate);
          continue;
        }
        const trials = [];
        for (const lr of tuning.learningRates) {
          const history = await train(entry, tuning.seed, lr, tuningHistoryPath(entry.id, lr, tuning.seed));
          trials.push(tuningTrial(lr, evalPoints(history), target));
        }
        const record: TuningRecord = {
          seed: tuning.seed,
          rounds: options.rounds,
          workers: options.workers,
          rule: tuningRule(target),
          trials,
          learningRate: chooseLearningRate(trials),
        };
        const all = readTuning();
        all[entry.id] = record;
        writeFileSync(tuningPath, JSON.stringify(all, null, 1));
        learningRates.set(entry.id, record.learningRate);
      }
      for (const seed of options.seeds)
        for (const entry of chosen) await train(entry, seed, learningRates.get(entry.id), path(entry.id, seed));
    } finally {
      await aggregator.close();
    }
  }
  const tuned = readTuning();
  const calibrations = readCalibrations(options.outDir);
  const settings: SettingRuns[] = entries
    .map((entry) => {
      const histories = options.seeds
        .filter((seed) => existsSync(path(entry.id, seed)))
        .map((seed) => JSON.parse(readFileSync(path(entry.id, seed), 'utf8')) as SwarmHistory);
      return { entry, histories };
    })
    .filter((s) => s.histories.length > 0)
    .map(({ entry, histories }) => {
      const learningRates = [...new Set(histories.map((h) => h.config.learningRate))];
      // The tuning is the seeds' only if they trained at its choice (not at --no-tune's rate).
      const tuning = tuned[entry.id];
      const chose = tuning !== undefined && learningRates.length === 1 && learningRates[0] === tuning.learningRate;
      const calibration = calibrationOf(calibrations, model, dataset, entry.id);
      return {
        entry,
        seeds: histories.map((h) => evalPoints(h, COMPARE_LINKS, calibration)),
        times: settingTimes(histories, calibration),
        roundParts: meanRoundParts(histories, COMPARE_LINKS, calibration),
        variance: settingVariance(histories),
        learningRates,
        ...(chose ? { tuning } : {}),
        aggregation: aggregationOf(histories),
      };
    });
  if (settings.length === 0) throw new Error(`no histories in ${options.outDir}: run the comparison first`);
  // The report states what the training of the histories it shows took (their tuning runs included), and the load
  // around it.
  const timings = readTimings();
  const shown = settings
    .flatMap(({ entry, tuning }) => [
      ...options.seeds.map((seed) => timings[`${entry.id}-seed${seed}`]),
      ...(tuning?.trials ?? []).map(
        (t) => timings[timingKey(tuningHistoryPath(entry.id, t.learningRate, tuning!.seed))],
      ),
    ])
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
      tuning: options.tuning,
      ...(options.tuningFrom === undefined ? {} : { tuningFrom: options.tuningFrom }),
      targets,
      evalNearWithin: EVAL_NEAR_WITHIN,
      momentum: DEFAULT_RUN_CONFIG.momentum,
      model,
      dataset,
      ...(options.downlink === undefined ? {} : { downlink: options.downlink }),
      wallSeconds,
      runs: shown.length,
      cores: cpus().length,
      loadAverage,
    },
    options.pngs,
  );
  return { winners, wallSeconds, settings };
}
