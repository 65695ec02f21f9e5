/**
 * `npm run compare -- [--model mlp|cnn|mlp-wide] [--dataset mnist|fashion] [--workers 4] [--downlink auto]
 *   [--rounds 60]
 *   [--seeds 1,2,3,4,5] [--eval-every 2] [--only svd-2,qsgd-4] [--tune-seed 0] [--lrs 0.025,0.05,0.1,0.2]
 *   [--no-tune [--lr 0.1] | --tuning-from results/compare]
 *   [--quick] [--report-only] [--out-dir results/compare] [--report docs/results.md]`
 *
 * Tunes each setting of scripts/compare/schemes.ts (a scheme at one value of
 * its parameter) on the tuning seed: one run per learning rate of --lrs,
 * the best kept (scripts/compare/tuning.ts; tuning.json beside the
 * histories). Then trains every setting once per seed at its rate and
 * writes the report (tables with bootstrap intervals, and plots) into
 * --report. --no-tune trains every setting at --lr (the server's default
 * when absent) instead. --only takes setting ids (the histories' file
 * names). --tuning-from DIR takes each setting's rate from DIR's
 * tuning.json instead (a task with more workers reusing the 4 workers'
 * tuning, whose cost grows with the workers). --quick is a short version
 * (a two-budget spectral sweep and TernGrad, two learning rates, 5 seeds,
 * 6 rounds of 2 workers) that writes to results/compare-quick/ unless told
 * otherwise. --downlink full|relay|atomo brings every setting's model down
 * that way instead of the server's default `auto` (a task of its own, in
 * results/compare<task>-<mode>/ and its own section). --model cnn runs the
 * same protocol on the CNN, into results/compare-cnn/ and its own section
 * of the report. Before training, it times each setting's compression and
 * encoding and the model's compute on its idle main thread
 * (scripts/compare/calibration.ts; calibration.json beside the histories):
 * the simulated seconds take those. Prints its own run time.
 */
import { parseArgs } from 'node:util';
import { DATASET_NAMES, isDatasetName } from '../../core/data/datasets';
import { MODEL_KINDS, type ModelKind } from '../../core/model';
import { DOWNLINK_MODES, isDownlinkMode } from '../../core/schema';
import { QUICK, runCompare } from './runCompare';
import { DEFAULT_TASK, taskTag } from './task';
import { TUNING_LEARNING_RATES, TUNING_SEED } from './tuning';

const { values } = parseArgs({
  options: {
    model: { type: 'string' },
    dataset: { type: 'string' },
    workers: { type: 'string' },
    downlink: { type: 'string' },
    rounds: { type: 'string' },
    seeds: { type: 'string' },
    'eval-every': { type: 'string' },
    only: { type: 'string' },
    'tune-seed': { type: 'string' },
    lrs: { type: 'string' },
    'no-tune': { type: 'boolean', default: false },
    'tuning-from': { type: 'string' },
    lr: { type: 'string' },
    quick: { type: 'boolean', default: false },
    'report-only': { type: 'boolean', default: false },
    'out-dir': { type: 'string' },
    report: { type: 'string' },
  },
  strict: true,
});
const quick = values.quick;
const model = values.model ?? 'mlp';
if (!MODEL_KINDS.includes(model as ModelKind)) {
  console.error(`--model must be one of ${MODEL_KINDS.join(', ')}`);
  process.exit(2);
}
const dataset = values.dataset ?? 'mnist';
if (!isDatasetName(dataset)) {
  console.error(`--dataset must be one of ${DATASET_NAMES.join(', ')}`);
  process.exit(2);
}
const int = (name: string, text: string | undefined, fallback: number) => {
  const n = text === undefined ? fallback : Number(text);
  if (!Number.isInteger(n) || n < 1) {
    console.error(`--${name} must be a positive integer`);
    process.exit(2);
  }
  return n;
};
const seeds =
  values.seeds === undefined
    ? quick
      ? [...QUICK.seeds]
      : [1, 2, 3, 4, 5]
    : values.seeds.split(',').map((s) => int('seeds', s, 1));
const rate = (text: string) => {
  const lr = Number(text);
  if (!(lr > 0 && lr <= 10)) {
    console.error(`a learning rate must be in (0, 10], got '${text}'`);
    process.exit(2);
  }
  return lr;
};
const tuneSeed =
  values['tune-seed'] === undefined ? (quick ? QUICK.tuning.seed : TUNING_SEED) : Number(values['tune-seed']);
if (!Number.isInteger(tuneSeed) || tuneSeed < 0 || seeds.includes(tuneSeed)) {
  console.error('--tune-seed must be a non-negative integer that is not one of --seeds');
  process.exit(2);
}
const learningRates =
  values.lrs === undefined
    ? quick
      ? [...QUICK.tuning.learningRates]
      : [...TUNING_LEARNING_RATES]
    : values.lrs.split(',').map(rate);
if (values.lr !== undefined && !values['no-tune']) {
  console.error('--lr is the rate of --no-tune: without it, the tuning picks each rate from --lrs');
  process.exit(2);
}
if (values['tuning-from'] !== undefined && values['no-tune']) {
  console.error('--tuning-from takes its rates from another tuning: it does not go with --no-tune');
  process.exit(2);
}
const workers = int('workers', values.workers, quick ? QUICK.workers : DEFAULT_TASK.workers);
const downlink = values.downlink ?? 'auto';
if (!isDownlinkMode(downlink)) {
  console.error(`--downlink must be one of ${DOWNLINK_MODES.join(', ')}`);
  process.exit(2);
}
// Each task's histories go to their own folder (scripts/compare/task.ts).
const suffix = taskTag({ model: model as ModelKind, dataset, workers, downlink });
const { winners, wallSeconds } = await runCompare({
  model: model as ModelKind,
  dataset,
  workers,
  ...(downlink === 'auto' ? {} : { downlink }),
  rounds: int('rounds', values.rounds, quick ? QUICK.rounds : 60),
  evalEvery: int('eval-every', values['eval-every'], quick ? QUICK.evalEvery : 2),
  seeds,
  tuning: values['no-tune'] ? null : { seed: tuneSeed, learningRates },
  ...(values['tuning-from'] === undefined ? {} : { tuningFrom: values['tuning-from'] }),
  ...(values.lr === undefined ? {} : { learningRate: rate(values.lr) }),
  ...(values.only !== undefined ? { only: values.only.split(',') } : quick ? { only: [...QUICK.only] } : {}),
  outDir: values['out-dir'] ?? (quick ? `results/compare-quick${suffix}` : `results/compare${suffix}`),
  reportPath: values.report ?? (quick ? `results/compare-quick${suffix}/results.md` : 'docs/results.md'),
  reportOnly: values['report-only'],
  pngs: !quick,
  progress: true,
  command: `npm run compare -- ${process.argv.slice(2).join(' ')}`.trim(),
});
console.log(winners);
console.log(`compare took ${(wallSeconds / 60).toFixed(1)} min`);
process.exit(0);
