/**
 * The settings of `npm run compare`: each a scheme at one value of its
 * parameter, so every rival is swept and can be seen at its best.
 *   - Sweeps: spectral ATOMO s ∈ {1, 2, 3, 4, 8}; QSGD with 1, 2, 4, 8 and
 *     16 levels and a norm per 512 entries; PowerSGD rank 1, 2 and 4;
 *     entry-wise ATOMO and atomo-auto by bytes, at 1×, 2× and 4× what
 *     TernGrad sends (core/codec/budgets.ts solves the budgets for bytes).
 *   - Byte-matched: spectral, entry-wise and Fourier ATOMO and PowerSGD's
 *     rank solved to send what TernGrad sends, and the fixed decompositions
 *     with those bytes split across layers as atomo-auto splits them (its
 *     fair baselines); TernGrad, also clipped at 2.5σ as its paper runs
 *     it; float32, the uncompressed reference.
 *   - QSGD travels in its paper's Elias coding; at 1 and 4 levels also in
 *     the fixed-width coding, the same draws in more bytes.
 *   - Every setting combines the round's estimates by the plain mean (what
 *     docs/design.md's estimator assumes, unbiased for the unbiased
 *     schemes); the server's robust default, the norm bound k = 3, appears
 *     once as its own setting (spectral s = 2), so its cost is measured.
 *   - Every setting's model comes down by the comparison's downlink: the
 *     server's default `auto` (each worker gets the smaller of the round's
 *     relayed gradients and the float32 model, bit-identical either way)
 *     unless `--downlink` names another. Under `auto`, on the MLP,
 *     byte-matched spectral ATOMO also runs with the full model every round
 *     (the paper's parameter server) and with the ATOMO-compressed model
 *     (docs/protocol.md, "Downlink").
 * A setting may carry any other run settings (`overrides`), passed to the
 * run's configuration as they are.
 */
import type { SchemeName } from '../../core/atomo/types';
import { matchedCompressions } from '../../core/codec/budgets';
import { expectedBytes } from '../../core/codec';
import { createModelLayout, type ModelKind } from '../../core/model';
import type { RunConfigPatch } from '../../core/protocol';
import {
  DEFAULT_AGGREGATION,
  DEFAULT_BUDGETS,
  DEFAULT_DOWNLINK_BUDGET,
  type AggregationRule,
  type DownlinkMode,
} from '../../core/schema';

/** One setting of the comparison. */
export interface CompareEntry {
  /** Short id: file name of its histories and key of the plots. */
  readonly id: string;
  /** What the tables and the legends print. */
  readonly label: string;
  /**
   * The scheme family it belongs to (a sweep's settings share it): the plots draw one line per family, its best
   * setting.
   */
  readonly family: string;
  readonly scheme: SchemeName;
  readonly budget: number;
  readonly levels: number;
  readonly bucketSize: number;
  /**
   * How the model goes down to the workers, and the `atomo` downlink's budget: the comparison's downlink unless the
   * setting names another (its id and label then say which).
   */
  readonly downlink: DownlinkMode;
  readonly downlinkBudget: number;
  /**
   * Bytes per worker-round split across layers by the worker (atomo-auto's knob; the fixed ATOMO schemes may take it
   * too).
   */
  readonly byteBudget?: number;
  /** Expected gradient bytes of one worker's round (core/codec/sizes.ts). */
  readonly expectedBytes: number;
  /** How the server combines the round's estimates: the plain mean unless the setting names another rule. */
  readonly aggregation: AggregationRule;
  /** Other run settings, passed to the run's configuration as they are. */
  readonly overrides?: RunConfigPatch;
}

/** The family of spectral ATOMO's settings with the comparison's rule and downlink (its sweep and byte-matched one). */
export const SPECTRAL_FAMILY = 'ATOMO spectral';

/** The comparison's rule unless a setting names another: the plain mean of the estimates. */
export const COMPARE_AGGREGATION: AggregationRule = { kind: 'mean' };

/** The sweeps' parameter values. */
export const SWEEPS = {
  svd: [1, 2, 3, 4, 8],
  qsgdLevels: [1, 2, 4, 8, 16],
  powersgdRank: [1, 2, 4],
  /** Byte budgets as multiples of TernGrad's bytes per round. */
  bytesTimesTernGrad: [1, 2, 4],
} as const;

/** A short text of an aggregation rule, for labels and tables. */
export function ruleText(rule: AggregationRule): string {
  switch (rule.kind) {
    case 'mean':
    case 'median':
      return rule.kind;
    case 'norm-bound':
      return `norm bound k = ${rule.k}`;
    case 'trimmed-mean':
      return `trimmed mean ${rule.trim}`;
  }
}

const DOWNLINK_LABELS: Readonly<Record<DownlinkMode, string>> = {
  auto: '',
  full: ', full model down every round',
  relay: ', relay downlink',
  atomo: `, ATOMO downlink s=${DEFAULT_DOWNLINK_BUDGET}`,
};

/** Every setting for a model and a batch size, each model coming down by `downlink` unless the setting names one. */
export function compareEntries(model: ModelKind, batchSize: number, downlink: DownlinkMode = 'auto'): CompareEntry[] {
  const layout = createModelLayout(model);
  const matched = matchedCompressions(layout, batchSize, [
    'atomo-svd',
    'atomo-entry',
    'atomo-dct',
    'powersgd',
    'atomo-auto',
  ]);
  const budgetOf = (scheme: SchemeName) => matched.find((c) => c.scheme === scheme)!.budget;
  interface Knobs {
    readonly levels?: number;
    readonly bucketSize?: number;
    /** A downlink of the setting's own, other than the comparison's. */
    readonly ownDownlink?: DownlinkMode;
    readonly byteBudget?: number;
    readonly aggregation?: AggregationRule;
    readonly overrides?: RunConfigPatch;
  }
  const make = (
    id: string,
    label: string,
    family: string,
    scheme: SchemeName,
    budget: number,
    { levels = 1, bucketSize = 0, ownDownlink, byteBudget, aggregation, overrides }: Knobs = {},
  ): CompareEntry => ({
    id: ownDownlink === undefined ? id : `${id}-${ownDownlink}`,
    label: ownDownlink === undefined ? label : `${label}${DOWNLINK_LABELS[ownDownlink]}`,
    family: ownDownlink === undefined ? family : `${family}${DOWNLINK_LABELS[ownDownlink]}`,
    scheme,
    budget,
    levels,
    bucketSize,
    downlink: ownDownlink ?? downlink,
    downlinkBudget: DEFAULT_DOWNLINK_BUDGET,
    ...(byteBudget === undefined ? {} : { byteBudget }),
    expectedBytes: expectedBytes(
      layout,
      {
        scheme,
        budget,
        levels,
        bucketSize,
        ...(byteBudget === undefined ? {} : { byteBudget }),
        ...(overrides?.qsgdCoding === undefined ? {} : { qsgdCoding: overrides.qsgdCoding }),
      },
      batchSize,
    ),
    aggregation: aggregation ?? COMPARE_AGGREGATION,
    ...(overrides === undefined ? {} : { overrides }),
  });
  const svd = budgetOf('atomo-svd');
  const entry = budgetOf('atomo-entry');
  const dct = budgetOf('atomo-dct');
  const rank = budgetOf('powersgd');
  const bytes = matched.find((c) => c.scheme === 'atomo-auto')!.byteBudget!;
  const SPECTRAL = SPECTRAL_FAMILY;
  const ENTRY = 'ATOMO entry-wise';
  const AUTO = 'ATOMO auto per layer';
  const POWERSGD = 'PowerSGD (biased)';
  const QSGD = 'QSGD, Elias-coded, buckets of 512';
  const QSGD_FIXED = 'QSGD, fixed-width, buckets of 512';
  const byBytes = SWEEPS.bytesTimesTernGrad.filter((times) => times > 1);
  const uplink = [
    make('none', 'float32 (uncompressed)', 'float32', 'none', 0),
    make('terngrad', 'TernGrad', 'TernGrad', 'terngrad', 0),
    // TernGrad as its paper runs it: each layer clipped to ±2.5σ before ternarising (unbiased for the clipped g).
    make('terngrad-clip', 'TernGrad, clipped at 2.5σ', 'TernGrad, clipped at 2.5σ', 'terngrad', 0, {
      overrides: { terngradClip: 2.5 },
    }),
    ...SWEEPS.svd.map((s) => make(`svd-${s}`, `${SPECTRAL} s=${s}`, SPECTRAL, 'atomo-svd', s)),
    // The server's robust default rule, on spectral ATOMO at its default budget.
    make(
      `svd-${DEFAULT_BUDGETS['atomo-svd']}-norm-bound`,
      `${SPECTRAL} s=${DEFAULT_BUDGETS['atomo-svd']}, ${ruleText(DEFAULT_AGGREGATION)}`,
      `${SPECTRAL}, ${ruleText(DEFAULT_AGGREGATION)}`,
      'atomo-svd',
      DEFAULT_BUDGETS['atomo-svd'],
      { aggregation: DEFAULT_AGGREGATION },
    ),
    ...SWEEPS.qsgdLevels.map((levels) =>
      make(`qsgd-${levels}`, `QSGD ${levels} level${levels === 1 ? '' : 's'}, Elias-coded`, QSGD, 'qsgd', 0, {
        levels,
        bucketSize: 512,
      }),
    ),
    // The fixed-width coding at two of the sweep's levels: the same draws as the Elias-coded settings, more bytes.
    ...[1, 4].map((levels) =>
      make(
        `qsgd-${levels}-fixed`,
        `QSGD ${levels} level${levels === 1 ? '' : 's'}, fixed-width`,
        QSGD_FIXED,
        'qsgd',
        0,
        {
          levels,
          bucketSize: 512,
          overrides: { qsgdCoding: 'fixed' },
        },
      ),
    ),
    ...SWEEPS.powersgdRank.map((r) => make(`powersgd-${r}`, `PowerSGD rank ${r} (biased)`, POWERSGD, 'powersgd', r)),
    make('svd-matched', `${SPECTRAL} s=${svd}`, SPECTRAL, 'atomo-svd', svd),
    make('entry-matched', `${ENTRY} s=${entry}`, ENTRY, 'atomo-entry', entry),
    make('dct-matched', `ATOMO Fourier (DCT) s=${dct}`, 'ATOMO Fourier (DCT)', 'atomo-dct', dct),
    // The rank that matches TernGrad's bytes, unless the sweep has it already.
    ...((SWEEPS.powersgdRank as readonly number[]).includes(rank)
      ? []
      : [make('powersgd-matched', `PowerSGD rank ${rank} (biased)`, POWERSGD, 'powersgd', rank)]),
    make('auto-matched', `${AUTO}, ${bytes} B`, AUTO, 'atomo-auto', 0, { byteBudget: bytes }),
    // The fixed decompositions with the same bytes split across layers as atomo-auto splits them: its fair baselines.
    make('svd-bytes', `${SPECTRAL}, ${bytes} B split across layers`, SPECTRAL, 'atomo-svd', svd, {
      byteBudget: bytes,
    }),
    make('entry-bytes', `${ENTRY}, ${bytes} B split across layers`, ENTRY, 'atomo-entry', entry, {
      byteBudget: bytes,
    }),
    ...byBytes.flatMap((times) => [
      make(`auto-bytes-${times}x`, `${AUTO}, ${times * bytes} B`, AUTO, 'atomo-auto', 0, {
        byteBudget: times * bytes,
      }),
      make(`entry-bytes-${times}x`, `${ENTRY}, ${times * bytes} B split across layers`, ENTRY, 'atomo-entry', entry, {
        byteBudget: times * bytes,
      }),
    ]),
  ];
  if (model !== 'mlp' || downlink !== 'auto') return uplink;
  return [
    ...uplink,
    make('svd-matched', `${SPECTRAL} s=${svd}`, SPECTRAL, 'atomo-svd', svd, { ownDownlink: 'full' }),
    make('svd-matched', `${SPECTRAL} s=${svd}`, SPECTRAL, 'atomo-svd', svd, { ownDownlink: 'atomo' }),
  ];
}
