/**
 * What one comparison trains: a model on a dataset with N workers, the model
 * coming down by one downlink. Each task
 * keeps its histories in its own folder and its own generated section of the
 * report, named by one tag, so the grid of tasks (docs/results.md) fills one
 * file without one task overwriting another.
 */
import { DATASETS, DEFAULT_DATASET, type DatasetName } from '../../core/data/datasets';
import type { ModelKind } from '../../core/model';
import type { DownlinkMode } from '../../core/schema';

export interface CompareTask {
  readonly model: ModelKind;
  readonly dataset: DatasetName;
  readonly workers: number;
  /**
   * How every setting's model comes down, unless a setting names its own: the server's default `auto` when absent.
   * `full` is the paper's parameter server, and spares each simulated worker the decoding of N − 1 relayed gradients a
   * round (N² decodes a round in one process, which the 32-worker wide MLP cannot afford on two cores).
   */
  readonly downlink?: DownlinkMode;
}

/**
 * The accuracy targets of a dataset's comparison, the headline one in the middle: what its models reach in the
 * comparison's rounds with room above it, so that settings differ in when they get there, not whether. MNIST's MLP
 * reaches 90% in about 60 rounds of 4 workers; Fashion-MNIST, harder, levels off near 82% for the CNN.
 */
export const TASK_TARGETS: Readonly<Record<DatasetName, readonly [number, number, number]>> = {
  mnist: [0.85, 0.9, 0.92],
  fashion: [0.7, 0.75, 0.8],
};

/**
 * Held-out examples every comparison evaluates on (RunConfig.evalExamples): all 2,000 of MNIST's, the first 2,000 of
 * Fashion-MNIST's 10,000 (a uniform sample: make-data shuffles the split). The standard error of an accuracy near
 * 75% is then one point, below the 5 points between the targets, and the CNN's and the wide MLP's evaluations, which
 * are most of their comparisons' cost on two cores, take a fifth of the time.
 */
export const COMPARE_EVAL_EXAMPLES = 2000;

/**
 * A comparison round's deadline. Its time is the link model's, not the wall clock's, so a round waits for every
 * worker however long the loaded machine takes: under the server's 15 s default, 32 worker threads on two cores
 * closed slow rounds at the quorum, and a setting averaged fewer estimates than its N.
 */
export const COMPARE_ROUND_DEADLINE_MS = 600_000;

/** The target the headline tables, the plots' choice of setting and the tuning use: the middle one. */
export function headlineTarget(dataset: DatasetName): number {
  return TASK_TARGETS[dataset][1];
}

/** The task of a plain `npm run compare`: the MLP on MNIST with 4 workers. */
export const DEFAULT_TASK: CompareTask = { model: 'mlp', dataset: DEFAULT_DATASET, workers: 4 };

/** A downlink other than `auto`, in headings. */
const DOWNLINK_TITLES: Readonly<Record<Exclude<DownlinkMode, 'auto'>, string>> = {
  full: 'full model down',
  relay: 'relay downlink',
  atomo: 'ATOMO downlink',
};

/** Each model's name in headings and plot titles. */
export const MODEL_TITLES: Readonly<Record<ModelKind, string>> = { mlp: 'MLP', cnn: 'CNN', 'mlp-wide': 'Wide MLP' };

/**
 * The task's tag: '' for the default task, else what differs from it, in a fixed order: '-cnn', '-fashion',
 * '-cnn-fashion-n8', '-mlp-wide-fashion-n32-full'. The histories' folder is results/compare<tag>, the report's
 * markers compare<tag>:start/end.
 */
export function taskTag(task: CompareTask): string {
  const parts = [
    task.model === DEFAULT_TASK.model ? '' : task.model,
    task.dataset === DEFAULT_TASK.dataset ? '' : task.dataset,
    task.workers === DEFAULT_TASK.workers ? '' : `n${task.workers}`,
    task.downlink === undefined || task.downlink === 'auto' ? '' : task.downlink,
  ].filter((part) => part !== '');
  return parts.map((part) => `-${part}`).join('');
}

/** The prefix of the task's headings: '' for the default task, else e.g. 'CNN · Fashion-MNIST · 8 workers: '. */
export function taskHeading(task: CompareTask): string {
  if (taskTag(task) === '') return '';
  const parts = [MODEL_TITLES[task.model]];
  if (task.dataset !== DEFAULT_TASK.dataset) parts.push(DATASETS[task.dataset].title);
  if (task.workers !== DEFAULT_TASK.workers) parts.push(`${task.workers} workers`);
  if (task.downlink !== undefined && task.downlink !== 'auto') parts.push(DOWNLINK_TITLES[task.downlink]);
  return `${parts.join(' · ')}: `;
}
