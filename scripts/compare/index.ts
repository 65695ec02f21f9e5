/**
 * `npm run compare -- [--model mlp|cnn] [--dataset mnist|fashion] [--workers 4] [--rounds 60] [--seeds 1,2,3]
 *   [--eval-every 2] [--only svd-matched,qsgd-1]
 *   [--quick] [--report-only] [--out-dir results/compare] [--report docs/results.md]`
 *
 * Trains every setting of scripts/compare/schemes.ts once per seed, then
 * writes the report (tables and plots) into --report. --quick is a short
 * version (2 settings, 3 seeds, 6 rounds of 2 workers) that writes to
 * results/compare-quick/ unless told otherwise. --model cnn runs the same
 * protocol on the CNN, into results/compare-cnn/ and its own section of the
 * report. Prints its own run time.
 */
import { parseArgs } from 'node:util';
import { DATASET_NAMES, isDatasetName } from '../../core/data/datasets';
import { MODEL_KINDS, type ModelKind } from '../../core/model';
import { QUICK, runCompare } from './runCompare';

const { values } = parseArgs({
  options: {
    model: { type: 'string' },
    dataset: { type: 'string' },
    workers: { type: 'string' },
    rounds: { type: 'string' },
    seeds: { type: 'string' },
    'eval-every': { type: 'string' },
    only: { type: 'string' },
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
// Another dataset's histories go to their own folder, beside the MNIST ones.
const suffix = `${model === 'mlp' ? '' : `-${model}`}${dataset === 'mnist' ? '' : `-${dataset}`}`;
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
      : [1, 2, 3]
    : values.seeds.split(',').map((s) => int('seeds', s, 1));
const { winners, wallSeconds } = await runCompare({
  model: model as ModelKind,
  dataset,
  workers: int('workers', values.workers, quick ? QUICK.workers : 4),
  rounds: int('rounds', values.rounds, quick ? QUICK.rounds : 60),
  evalEvery: int('eval-every', values['eval-every'], quick ? QUICK.evalEvery : 2),
  seeds,
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
