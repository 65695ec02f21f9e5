/**
 * The swarm's command line (`npm run swarm -- …`), parsed into SwarmOptions.
 * Kept apart from the runner so `npm run compare` and the tests build the
 * same options without a command line.
 */
import { parseArgs } from 'node:util';
import { SCHEME_NAMES, type SchemeName } from '../../core/atomo/types';
import { DATASET_NAMES, isDatasetName, type DatasetName } from '../../core/data/datasets';
import { MODEL_KINDS, type ModelKind } from '../../core/model/layout';
import type { RunConfigPatch } from '../../core/protocol';
import {
  DEFAULT_AGGREGATION,
  DEFAULT_BUDGETS,
  DEFAULT_DOWNLINK_BUDGET,
  DEFAULT_QSGD_BUCKET,
  DEFAULT_QSGD_LEVELS,
  DOWNLINK_MODES,
  isDownlinkMode,
  RUN_CONFIG_BOUNDS,
  type AggregationRule,
  type DownlinkMode,
} from '../../core/schema';

/** Where a worker thread computes its gradients. */
export type SwarmBackend = 'cpu' | 'webgpu';

/** Everything one swarm run needs. */
export interface SwarmOptions {
  readonly workers: number;
  readonly scheme: SchemeName;
  /** ATOMO budget s (atomo-svd, atomo-entry, atomo-dct); PowerSGD: its rank. */
  readonly budget: number;
  /** QSGD levels. */
  readonly levels: number;
  /** QSGD bucket size (0: one per layer). */
  readonly bucketSize: number;
  /**
   * Bytes per worker per round for the whole model, split across layers (ATOMO schemes; atomo-auto's default when
   * absent: the server's).
   */
  readonly byteBudget?: number;
  /** Error feedback on an unbiased scheme (then biased). */
  readonly errorFeedback?: boolean;
  readonly rounds: number;
  readonly seed: number;
  /** The model to train (mlp by default). */
  readonly model?: ModelKind;
  /** The images to train and evaluate on (MNIST by default). */
  readonly dataset?: DatasetName;
  /** How the model reaches the workers (docs/protocol.md, "Downlink"); the server's default (`auto`) when absent. */
  readonly downlink?: DownlinkMode;
  /** The `atomo` downlink's budget per layer. */
  readonly downlinkBudget?: number;
  /** Evaluate on the held-out digits every this many rounds. */
  readonly evalEvery: number;
  /** How the server combines the round's estimates; the server's default (the norm bound) when absent. */
  readonly aggregation?: AggregationRule;
  /** SGD learning rate; the server's default when absent. */
  readonly learningRate?: number;
  /**
   * Any other run settings, passed to the run's configuration as they are (the server validates them); the fields
   * above win where both set one.
   */
  readonly overrides?: RunConfigPatch;
  readonly backend: SwarmBackend;
  /** History file to write (JSON); none when absent. */
  readonly out?: string;
  /** An aggregator to use instead of an in-process one, with its admin token. */
  readonly url?: string;
  readonly token?: string;
  /** Run name shown on the dashboard. */
  readonly name?: string;
  /** Draw the progress bar (stderr); the compare and tests turn it off. */
  readonly progress: boolean;
}

/** Defaults of the command line. */
export const SWARM_DEFAULTS = {
  workers: 8,
  scheme: 'atomo-svd',
  rounds: 300,
  seed: 1,
  evalEvery: 5,
  backend: 'cpu',
} as const;

/**
 * An aggregation rule as the command line writes it: `mean`, `median`, `norm-bound[:k]` (k = 3 by default, the
 * server's default rule) or `trimmed-mean[:trim]` (trim 0.1 by default, the dashboard's).
 */
export function parseAggregation(text: string): AggregationRule {
  const [kind, parameter, ...rest] = text.split(':');
  const number = (fallback: number) => (parameter === undefined ? fallback : Number(parameter));
  const within = (x: number, { min, max }: { readonly min: number; readonly max: number }) =>
    Number.isFinite(x) && x >= min && x <= max;
  if (rest.length === 0) {
    if ((kind === 'mean' || kind === 'median') && parameter === undefined) return { kind };
    const defaultK = DEFAULT_AGGREGATION.kind === 'norm-bound' ? DEFAULT_AGGREGATION.k : 3;
    if (kind === 'norm-bound' && within(number(defaultK), RUN_CONFIG_BOUNDS.normBoundK))
      return { kind, k: number(defaultK) };
    if (kind === 'trimmed-mean' && within(number(0.1), RUN_CONFIG_BOUNDS.trim)) return { kind, trim: number(0.1) };
  }
  const { normBoundK: k, trim } = RUN_CONFIG_BOUNDS;
  throw new Error(
    `--aggregation must be mean, median, norm-bound[:k] (k in ${k.min}..${k.max}) or trimmed-mean[:trim] ` +
      `(trim in ${trim.min}..${trim.max}), got '${text}'`,
  );
}

function positiveInteger(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer, got '${text}'`);
  return value;
}

/** Parses `npm run swarm` arguments; throws with a readable message on a bad one. */
export function parseSwarmArgs(argv: readonly string[]): SwarmOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      workers: { type: 'string' },
      scheme: { type: 'string' },
      budget: { type: 'string' },
      levels: { type: 'string' },
      bucket: { type: 'string' },
      bytes: { type: 'string' },
      'error-feedback': { type: 'boolean', default: false },
      model: { type: 'string' },
      dataset: { type: 'string' },
      downlink: { type: 'string' },
      'downlink-budget': { type: 'string' },
      rounds: { type: 'string' },
      seed: { type: 'string' },
      'eval-every': { type: 'string' },
      aggregation: { type: 'string' },
      lr: { type: 'string' },
      backend: { type: 'string' },
      out: { type: 'string' },
      url: { type: 'string' },
      token: { type: 'string' },
      name: { type: 'string' },
      quiet: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const scheme = (values.scheme ?? SWARM_DEFAULTS.scheme) as SchemeName;
  if (!SCHEME_NAMES.includes(scheme)) throw new Error(`--scheme must be one of ${SCHEME_NAMES.join(', ')}`);
  const backend = values.backend ?? SWARM_DEFAULTS.backend;
  if (backend !== 'cpu' && backend !== 'webgpu') throw new Error('--backend must be cpu or webgpu');
  if (values.url !== undefined && values.token === undefined)
    throw new Error('--url needs --token (the aggregator prints its admin token at start)');
  const model = (values.model ?? 'mlp') as ModelKind;
  if (!MODEL_KINDS.includes(model)) throw new Error(`--model must be one of ${MODEL_KINDS.join(', ')}`);
  const dataset = values.dataset ?? 'mnist';
  if (!isDatasetName(dataset)) throw new Error(`--dataset must be one of ${DATASET_NAMES.join(', ')}`);
  const downlink = values.downlink;
  if (downlink !== undefined && !isDownlinkMode(downlink))
    throw new Error(`--downlink must be one of ${DOWNLINK_MODES.join(', ')}`);
  const downlinkBudget =
    values['downlink-budget'] === undefined ? DEFAULT_DOWNLINK_BUDGET : Number(values['downlink-budget']);
  if (!(downlinkBudget > 0) || !Number.isFinite(downlinkBudget))
    throw new Error('--downlink-budget must be a positive number');
  const learningRate = values.lr === undefined ? undefined : Number(values.lr);
  const lr = RUN_CONFIG_BOUNDS.learningRate;
  if (learningRate !== undefined && !(learningRate > lr.minExclusive && learningRate <= lr.max))
    throw new Error(`--lr must be in (${lr.minExclusive}, ${lr.max}], got '${values.lr}'`);
  const budget = values.budget === undefined ? DEFAULT_BUDGETS[scheme] : Number(values.budget);
  if (!Number.isFinite(budget) || budget < 0) throw new Error('--budget must be a non-negative number');
  return {
    workers: positiveInteger('workers', values.workers, SWARM_DEFAULTS.workers),
    scheme,
    budget,
    levels: positiveInteger('levels', values.levels, DEFAULT_QSGD_LEVELS),
    bucketSize: values.bucket === '0' ? 0 : positiveInteger('bucket', values.bucket, DEFAULT_QSGD_BUCKET),
    rounds: positiveInteger('rounds', values.rounds, SWARM_DEFAULTS.rounds),
    seed: positiveInteger('seed', values.seed, SWARM_DEFAULTS.seed),
    model,
    dataset,
    ...(downlink === undefined ? {} : { downlink }),
    downlinkBudget,
    evalEvery: positiveInteger('eval-every', values['eval-every'], SWARM_DEFAULTS.evalEvery),
    backend,
    progress: !values.quiet,
    ...(values.bytes === undefined ? {} : { byteBudget: positiveInteger('bytes', values.bytes, 0) }),
    ...(values['error-feedback'] ? { errorFeedback: true } : {}),
    ...(values.aggregation === undefined ? {} : { aggregation: parseAggregation(values.aggregation) }),
    ...(learningRate === undefined ? {} : { learningRate }),
    ...(values.out === undefined ? {} : { out: values.out }),
    ...(values.url === undefined ? {} : { url: values.url }),
    ...(values.token === undefined ? {} : { token: values.token }),
    ...(values.name === undefined ? {} : { name: values.name }),
  };
}
