/**
 * Variance against bytes on the runs' real gradients: per setting, the
 * estimator's normalised variance E‖ĝ − g‖²/‖g‖² as its closed form
 * predicts it and as the round's one draw realised it (a Monte-Carlo
 * estimate over every worker-round of every seed), beside the bytes a worker
 * sent for it; and, per layer, the indicator that predicts whether spectral
 * or entry-wise atoms cost less variance per byte (docs/design.md, "Which
 * atoms suit a layer").
 */
import { fmt, markdownTable } from '../bench/report';
import type { SwarmHistory } from '../swarm/history';
import type { SettingRuns } from './plots';
import { quantile } from './stats';

/** What a setting's histories say of its variance. */
export interface SettingVariance {
  /** Mean over rounds of the closed-form and realised normalised variance. */
  readonly closedForm: number;
  readonly realised: number;
  /** Standard error of `realised` (sample sd over rounds / √rounds). */
  readonly realisedStandardError: number;
  /** Wire bytes a worker sent per round, the mean. */
  readonly upBytes: number;
  /** Per layer: the median of the indicator over rounds, null when no round reported one. */
  readonly indicatorMedians: readonly (number | null)[];
  readonly rounds: number;
}

export function settingVariance(histories: readonly SwarmHistory[]): SettingVariance {
  const rounds = histories.flatMap((h) => h.rounds).filter((r) => r.contributors > 0);
  const n = Math.max(1, rounds.length);
  const closedForm = rounds.reduce((sum, r) => sum + r.normalisedClosedForm, 0) / n;
  const realised = rounds.reduce((sum, r) => sum + r.normalisedRealised, 0) / n;
  const sd =
    rounds.length < 2
      ? 0
      : Math.sqrt(rounds.reduce((sum, r) => sum + (r.normalisedRealised - realised) ** 2, 0) / (rounds.length - 1));
  const upBytes = rounds.reduce((sum, r) => sum + r.wireUp / r.contributors, 0) / n;
  const layers = Math.max(0, ...rounds.map((r) => r.layers?.length ?? 0));
  const indicatorMedians = Array.from({ length: layers }, (_, l) => {
    const values = rounds
      .map((r) => r.layers?.[l]?.indicator ?? null)
      .filter((x): x is number => x !== null && Number.isFinite(x))
      .sort((a, b) => a - b);
    return values.length === 0 ? null : quantile(values, 0.5);
  });
  return {
    closedForm,
    realised,
    realisedStandardError: sd / Math.sqrt(n),
    upBytes,
    indicatorMedians,
    rounds: rounds.length,
  };
}

/** The table of variance against bytes, every setting with variance statistics. */
export function varianceTable(settings: readonly SettingRuns[]): string {
  const rows = settings.flatMap(({ entry, variance }) =>
    variance === undefined
      ? []
      : [
          [
            entry.label,
            fmt(variance.upBytes / 1e3),
            fmt(variance.closedForm),
            `${fmt(variance.realised)} ± ${fmt(variance.realisedStandardError, 2)}`,
            variance.closedForm > 0 ? fmt(variance.realised / variance.closedForm) : '—',
            fmt((variance.closedForm * variance.upBytes) / 1e3),
            variance.indicatorMedians.map((m) => (m === null ? '—' : fmt(m))).join(', '),
          ],
        ],
  );
  return (
    "Each round's normalised variance of the round's estimates, E‖ĝ − g‖²/‖g‖² summed over layers, as its closed " +
    'form gives it and as the one draw each worker made realised it (their mean over every round of every seed is ' +
    "a Monte-Carlo estimate of the closed form's mean; ± one standard error over rounds), on the runs' real " +
    'gradients, against the wire bytes a worker sent per round. Variance × kB is the figure of merit at equal ' +
    "bytes (an unbiased scheme's variance falls about as 1/bytes): lower is better. PowerSGD is biased, so its " +
    '"variance" is its deterministic error. The last column is the per-layer indicator ‖G‖_*·√(m+n)/‖g‖₁ ' +
    '(median over rounds, layers in model order; below about 0.6 spectral atoms cost less variance per byte than ' +
    'entries on this wire).\n\n' +
    markdownTable(
      [
        'setting',
        'uplink kB per worker-round',
        'variance (closed form)',
        'variance (realised)',
        'realised ÷ closed form',
        'variance × kB',
        'indicator per layer (median)',
      ],
      rows,
    )
  );
}
