/**
 * The report's answer in the paper's terms: each setting's speed-up over
 * float32 SGD in simulated time to the headline target, with a bootstrap
 * interval, per network; and where a round's time goes (compute, the
 * worker's download and upload, the shared server link, latency, the
 * server's own work), as a table and a stacked-bar figure.
 */
import type { RoundTimeParts, LinkModel } from '../../core/traffic/linkModel';
import { fmt, markdownTable } from '../bench/report';
import { toSvg, type SettingRuns } from './plots';
import { SPECTRAL_FAMILY } from './schemes';
import { atTarget, bootstrapRatioCi, type Censored, type EvalPoint } from './stats';

/** The uncompressed reference every speed-up divides by. */
export const REFERENCE_SETTING = 'none';

/** The paper's scheme at TernGrad's bytes: the reference of the like-for-like statement. */
export const SPECTRAL_SETTING = 'svd-matched';

/**
 * A ratio cell: the mean over `reference`'s runs of the quantity at the target over the mean over `setting`'s,
 * [95% CI]. Runs of `setting` that never got there make its mean a lower bound, so the ratio is an upper bound (≤);
 * such runs of `reference` make it a lower bound (≥); both: unknown. An interval that holds 1 is a tie.
 */
export function speedUpCell(reference: readonly Censored[], setting: readonly Censored[]): string {
  if (reference.length === 0 || setting.length === 0) return '—';
  const refCensored = reference.some((r) => r.censored);
  const censored = setting.some((r) => r.censored);
  if (refCensored && censored) return 'neither reached it with every seed';
  const ci = bootstrapRatioCi(
    reference.map((r) => r.value),
    setting.map((r) => r.value),
  );
  const bound = censored ? '≤ ' : refCensored ? '≥ ' : '';
  const tie = !censored && !refCensored && ci.lo <= 1 && ci.hi >= 1 ? ' (tie)' : '';
  return `${bound}${fmt(ci.mean)}× [${fmt(ci.lo)}, ${fmt(ci.hi)}]${tie}`;
}

/** A setting's runs at `target`: the quantity `pick` where each got there, or at its end (censored). */
function runsAt(s: SettingRuns, target: number, pick: (p: EvalPoint) => number): Censored[] {
  return s.seeds.map((points) => atTarget(points, target, pick)).filter((c): c is Censored => c !== null);
}

/**
 * Rows of a ratio of mean times (and traffic) to `target` per network, one per setting other than `pivot`:
 * `pivot`'s over the setting's (`pivot` is the reference the setting is faster than when above 1), or the setting's
 * over `pivot`'s when `pivotBelow` (how much faster `pivot` is than the setting).
 */
function ratioRows(
  settings: readonly SettingRuns[],
  pivot: SettingRuns,
  links: readonly LinkModel[],
  target: number,
  pivotBelow: boolean,
) {
  const cell = (pick: (p: EvalPoint) => number, s: SettingRuns) => {
    const [a, b] = [runsAt(pivot, target, pick), runsAt(s, target, pick)];
    return pivotBelow ? speedUpCell(b, a) : speedUpCell(a, b);
  };
  return settings
    .filter((s) => s !== pivot)
    .map((s) => [s.entry.label, ...links.map((_, i) => cell((p) => p.seconds[i]!, s)), cell((p) => p.totalMB, s)]);
}

const RATIO_TEXT =
  "In brackets the 95% percentile-bootstrap interval of the ratio of means (each setting's seeds resampled on " +
  'their own); "(tie)" where it holds 1; ≤ where some runs of the row\'s setting never got there (their time ' +
  "counts at the run's end, so the ratio is at most this), ≥ where some of the reference's did not. The last " +
  'column is the same ratio for the megabytes both ways.';

/** Per network, each setting's speed-up over float32 to `target`, and its traffic both ways against float32's. */
export function speedUpTable(settings: readonly SettingRuns[], links: readonly LinkModel[], target: number): string {
  const reference = settings.find((s) => s.entry.id === REFERENCE_SETTING);
  if (reference === undefined) return 'No float32 run in this comparison: no speed-up to report.';
  return (
    `Float32 SGD's mean simulated time to ${+(target * 100).toFixed(1)}% over each setting's, per network: above ` +
    `1, the setting gets there sooner. ${RATIO_TEXT}\n\n` +
    markdownTable(
      ['setting', ...links.map((l) => `${l.name}: speed-up`), 'traffic ÷ (MB both ways)'],
      ratioRows(settings, reference, links, target, false),
    )
  );
}

/**
 * The paper's comparison: spectral ATOMO's speed-up over each other setting (the rival's mean time to `target` over
 * spectral's), per network. Spectral ATOMO is its byte-matched setting where the comparison ran it (TernGrad's bytes:
 * like for like), else the spectral sweep's best among `best` (the plots' choice per family: the fewest rounds to
 * `target`).
 */
export function againstSpectralTable(
  settings: readonly SettingRuns[],
  links: readonly LinkModel[],
  target: number,
  best: readonly SettingRuns[],
) {
  const matched = settings.find((s) => s.entry.id === SPECTRAL_SETTING);
  const spectral = matched ?? best.find((s) => s.entry.family === SPECTRAL_FAMILY);
  if (spectral === undefined) return 'No spectral ATOMO run in this comparison.';
  const which =
    matched === undefined
      ? `the spectral setting that reaches ${+(target * 100).toFixed(1)}% in the fewest rounds`
      : "spectral ATOMO at TernGrad's bytes";
  return (
    `Each setting's mean simulated time to ${+(target * 100).toFixed(1)}% over ${spectral.entry.label}'s ` +
    `(${which}), per network: above 1, spectral ATOMO gets there sooner (the paper's "× faster"). ` +
    `${RATIO_TEXT}\n\n` +
    markdownTable(
      ['setting', ...links.map((l) => `${l.name}: spectral's speed-up`), 'traffic ÷ (MB both ways)'],
      ratioRows(settings, spectral, links, target, true),
    )
  );
}

/** The parts in the order they add up, with the names the table and the figure give them. */
const PARTS: readonly (readonly [keyof RoundTimeParts, string])[] = [
  ['computeMs', 'compute + compression'],
  ['downMs', "worker's download"],
  ['upMs', "worker's upload"],
  ['serverLinkMs', 'server link'],
  ['latencyMs', 'latency'],
  ['serverMs', 'server'],
];

/** Per setting and network, the mean round's simulated ms in its parts (linkModel.ts, RoundTimeParts). */
export function roundPartsTable(settings: readonly SettingRuns[], links: readonly LinkModel[]): string {
  const rows = settings.flatMap((s) =>
    links.map((link, i) => {
      const parts = s.roundParts?.[i];
      if (parts === undefined) return [s.entry.label, link.name, ...PARTS.map(() => '—'), '—'];
      const total = PARTS.reduce((sum, [key]) => sum + parts[key], 0);
      return [s.entry.label, link.name, ...PARTS.map(([key]) => fmt(parts[key])), fmt(total)];
    }),
  );
  return (
    "The mean round's simulated milliseconds in the parts that add up to it (core/traffic/linkModel.ts, " +
    "`RoundTimeParts`): a round waits for the slower of one worker's download, compute and upload on its own link " +
    "and the slowest compute followed by the server link's time for every worker's messages; that chain's parts " +
    "are counted, the other's are 0. Compute includes the compression, the encoding and the worker's update of " +
    'its replica from a compressed downlink (the time table\'s "times from" column splits them).\n\n' +
    markdownTable(['setting', 'network', ...PARTS.map(([, name]) => `${name} ms`), 'round ms'], rows)
  );
}

/** SVG of the same parts as stacked bars: one row per setting, one panel per network. */
export async function roundPartsPlot(
  settings: readonly SettingRuns[],
  links: readonly LinkModel[],
  title: string,
): Promise<string> {
  const values = settings.flatMap((s) =>
    links.flatMap((link, i) => {
      const parts = s.roundParts?.[i];
      if (parts === undefined) return [];
      return PARTS.map(([key, part], order) => ({
        setting: s.entry.label,
        network: link.name,
        part,
        order,
        ms: parts[key],
      }));
    }),
  );
  return toSvg({
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    background: 'white',
    data: { values },
    facet: { column: { field: 'network', type: 'nominal', title: null, sort: links.map((l) => l.name) } },
    spec: {
      width: 260,
      height: { step: 18 },
      mark: 'bar',
      encoding: {
        y: { field: 'setting', type: 'nominal', title: null, sort: settings.map((s) => s.entry.label) },
        x: { field: 'ms', type: 'quantitative', aggregate: 'sum', title: 'ms per round (mean)' },
        color: { field: 'part', type: 'nominal', sort: PARTS.map(([, name]) => name), title: null },
        order: { field: 'order', type: 'quantitative' },
      },
    },
    resolve: { scale: { x: 'independent' } },
  });
}
