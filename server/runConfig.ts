/**
 * Run configuration: the defaults, and the validation of what a teacher sends.
 * Defaults were tuned so that 4 workers reach the accuracy bar of the
 * training test in 100 rounds (server/training.test.ts).
 */
import { SCHEME_NAMES, isAtomoScheme, type SchemeName } from '../core/atomo/types';
import { MODEL_KINDS } from '../core/model/layout';
import type { DataSplit, QuorumRule, RunConfig, RunConfigPatch } from '../core/protocol';
import { ProtocolFault } from './fault';
import { MAX_LEVELS as MAX_QSGD_LEVELS } from '../core/atomo';

/**
 * The default budget of each scheme. Spectral ATOMO sends s = 2 rank-one
 * atoms per layer, as in the paper. Entry-wise ATOMO gets about the same
 * bytes on the largest layer: 2·(784 + 128 + 1) floats ≈ 1800 entries of ~5
 * bytes would be the match; 1024 keeps it below. QSGD and TernGrad have no
 * budget (their traffic is fixed by the shape); QSGD's knob is `levels`.
 */
export const DEFAULT_BUDGETS: Readonly<Record<SchemeName, number>> = {
  none: 0,
  'atomo-entry': 1024,
  'atomo-svd': 2,
  qsgd: 0,
  terngrad: 0,
  // A DCT coefficient costs what an entry costs (a varint and a float).
  'atomo-dct': 1024,
  // PowerSGD's budget is its rank r: 2 factor pairs, as spectral ATOMO's 2 atoms.
  powersgd: 2,
};

/** QSGD levels when a run sets none (4 levels: 3 bits per entry). */
export const DEFAULT_QSGD_LEVELS = 4;

/** The configuration of a run created without overrides; the server's default run uses it. */
export const DEFAULT_RUN_CONFIG: RunConfig = {
  name: 'default',
  scheme: 'atomo-svd',
  budget: DEFAULT_BUDGETS['atomo-svd'],
  levels: DEFAULT_QSGD_LEVELS,
  model: 'mlp',
  learningRate: 0.1,
  momentum: 0.9,
  batchSize: 32,
  localSteps: 1,
  split: { kind: 'iid' },
  shards: 8,
  seed: 1,
  quorum: { fraction: 0.5, minimum: 1 },
  roundDeadlineMs: 15_000,
  maxRounds: 1000,
  evalEvery: 10,
};

const KNOWN_KEYS = new Set<string>(Object.keys(DEFAULT_RUN_CONFIG));

/**
 * Merges a patch into `base` and validates every field; throws ProtocolFault
 * 'invalid-config' naming the first bad one. Changing the scheme without a
 * budget takes the new scheme's default budget.
 */
export function applyConfigPatch(base: RunConfig, patch: unknown): RunConfig {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
    throw new ProtocolFault('invalid-config', 'configuration must be an object');
  }
  const input = patch as Record<string, unknown>;
  for (const key of Object.keys(input)) {
    if (!KNOWN_KEYS.has(key)) throw new ProtocolFault('invalid-config', `unknown configuration field '${key}'`);
  }
  const p = input as RunConfigPatch;
  const scheme = p.scheme ?? base.scheme;
  const schemeChanged = p.scheme !== undefined && p.scheme !== base.scheme;
  const config: RunConfig = {
    name: p.name ?? base.name,
    scheme,
    budget: p.budget ?? (schemeChanged ? DEFAULT_BUDGETS[scheme] ?? 0 : base.budget),
    levels: p.levels ?? base.levels,
    model: p.model ?? base.model,
    learningRate: p.learningRate ?? base.learningRate,
    momentum: p.momentum ?? base.momentum,
    batchSize: p.batchSize ?? base.batchSize,
    localSteps: p.localSteps ?? base.localSteps,
    split: p.split ?? base.split,
    shards: p.shards ?? base.shards,
    seed: p.seed ?? base.seed,
    quorum: p.quorum ?? base.quorum,
    roundDeadlineMs: p.roundDeadlineMs ?? base.roundDeadlineMs,
    maxRounds: p.maxRounds ?? base.maxRounds,
    evalEvery: p.evalEvery ?? base.evalEvery,
  };
  validateConfig(config);
  return config;
}

/** Throws ProtocolFault 'invalid-config' unless every field of `config` is in range. */
export function validateConfig(config: RunConfig): void {
  const fail = (message: string): never => {
    throw new ProtocolFault('invalid-config', message);
  };
  if (typeof config.name !== 'string' || config.name.length === 0 || config.name.length > 80) fail('name must be 1–80 characters');
  if (!SCHEME_NAMES.includes(config.scheme)) fail(`scheme must be one of ${SCHEME_NAMES.join(', ')}`);
  const atomo = isAtomoScheme(config.scheme);
  if (atomo && !(isFiniteNumber(config.budget) && config.budget > 0)) fail('budget must be a positive number for ATOMO schemes');
  if (!atomo && !(isFiniteNumber(config.budget) && config.budget >= 0)) fail('budget must be a number ≥ 0');
  if (config.scheme === 'powersgd' && !(Number.isInteger(config.budget) && config.budget >= 1)) fail('budget (the rank) must be an integer ≥ 1 for PowerSGD');
  if (!isInteger(config.levels, 1, MAX_QSGD_LEVELS)) fail(`levels must be an integer in 1..${MAX_QSGD_LEVELS}`);
  if (!MODEL_KINDS.includes(config.model)) fail(`model must be one of ${MODEL_KINDS.join(', ')}`);
  if (!(isFiniteNumber(config.learningRate) && config.learningRate > 0 && config.learningRate <= 10)) fail('learningRate must be in (0, 10]');
  if (!(isFiniteNumber(config.momentum) && config.momentum >= 0 && config.momentum < 1)) fail('momentum must be in [0, 1)');
  if (!isInteger(config.batchSize, 1, 1024)) fail('batchSize must be an integer in 1..1024');
  if (config.localSteps !== 1) fail('localSteps must be 1 (synchronous SGD)');
  validateSplit(config.split, fail);
  if (!isInteger(config.shards, 1, 10_000)) fail('shards must be an integer in 1..10000');
  if (!isInteger(config.seed, 0, 0xffffffff)) fail('seed must be an integer in 0..2³²−1');
  validateQuorum(config.quorum, fail);
  if (!isInteger(config.roundDeadlineMs, 10, 3_600_000)) fail('roundDeadlineMs must be an integer in 10..3600000');
  if (!isInteger(config.maxRounds, 1, 10_000_000)) fail('maxRounds must be an integer ≥ 1');
  if (!isInteger(config.evalEvery, 1, 10_000_000)) fail('evalEvery must be an integer ≥ 1');
}

function validateSplit(split: DataSplit, fail: (message: string) => never): void {
  if (typeof split !== 'object' || split === null) fail('split must be { kind: "iid" } or { kind: "dirichlet", alpha }');
  if (split.kind === 'iid') {
    if (Object.keys(split).length !== 1) fail('an iid split has no other fields');
    return;
  }
  if (split.kind !== 'dirichlet') fail('split.kind must be "iid" or "dirichlet"');
  if (!(isFiniteNumber(split.alpha) && split.alpha > 0 && split.alpha <= 1e6)) fail('split.alpha must be in (0, 1e6]');
}

function validateQuorum(quorum: QuorumRule, fail: (message: string) => never): void {
  if (typeof quorum !== 'object' || quorum === null) fail('quorum must be { fraction, minimum }');
  if (!(isFiniteNumber(quorum.fraction) && quorum.fraction >= 0 && quorum.fraction <= 1)) fail('quorum.fraction must be in [0, 1]');
  if (!isInteger(quorum.minimum, 1, 100_000)) fail('quorum.minimum must be an integer ≥ 1');
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function isInteger(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}
