/**
 * The comparison's plots as Vega-Lite specs, rendered headless to SVG with
 * vega's View (renderer 'none': no DOM, no canvas): test accuracy against
 * cumulative megabytes on the wire both ways, and against simulated time,
 * one panel per link speed. Each line is the mean over seeds at each
 * evaluation round, the band spans the seeds' lowest and highest.
 */
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import type { ModelKind } from '../../core/model';
import type { LinkModel, RoundTimeParts } from '../../core/traffic/linkModel';
import type { AggregationRule } from '../../core/schema';
import type { CompareEntry } from './schemes';
import type { TuningRecord } from './tuning';
import type { SettingVariance } from './varianceTable';
import type { EvalPoint, SettingTimes } from './stats';
import { MODEL_TITLES } from './task';

/** One setting's runs, one per seed. */
export interface SettingRuns {
  readonly entry: CompareEntry;
  readonly seeds: readonly (readonly EvalPoint[])[];
  /** The learning rates its histories trained with (one, unless histories of several tunings are mixed). */
  readonly learningRates?: readonly number[];
  /** How its learning rate was chosen, when it was tuned. */
  readonly tuning?: TuningRecord;
  /** What its histories record of the aggregation. */
  readonly aggregation?: SettingAggregation;
  /** Where its simulated seconds take the workers' times from, and the mean step (stats.ts settingTimes). */
  readonly times?: SettingTimes;
  /** Per link of the report, the mean round's simulated time in its parts (stats.ts meanRoundParts). */
  readonly roundParts?: readonly RoundTimeParts[];
  /** Its estimator's variance against its bytes (varianceTable.ts). */
  readonly variance?: SettingVariance;
}

/** Over every round of a setting's histories: the rules recorded, the estimates combined, clipped and dropped. */
export interface SettingAggregation {
  readonly rules: readonly AggregationRule[];
  readonly rounds: number;
  /** Rounds whose record has the rule and its counts (older histories have none). */
  readonly recorded: number;
  readonly estimates: number;
  /** Rounds that combined fewer estimates than the run had workers (a worker that left or reconnected mid-round). */
  readonly shortRounds: number;
  readonly clipped: number;
  /** The most values per coordinate a round dropped. */
  readonly dropped: number;
}

interface Row {
  readonly scheme: string;
  readonly panel: string;
  readonly x: number;
  readonly mean: number;
  readonly lo: number;
  readonly hi: number;
}

/** Per setting and evaluation round: mean x, and the accuracy's mean, min and max over the seeds. */
function rows(settings: readonly SettingRuns[], panel: string, x: (p: EvalPoint) => number): Row[] {
  return settings.flatMap(({ entry, seeds }) => {
    const rounds = [...new Set(seeds.flatMap((s) => s.map((p) => p.round)))].sort((a, b) => a - b);
    return rounds.flatMap((round) => {
      const at = seeds.map((s) => s.find((p) => p.round === round)).filter((p): p is EvalPoint => p !== undefined);
      if (at.length === 0) return [];
      const acc = at.map((p) => p.accuracy);
      return [
        {
          scheme: entry.label,
          panel,
          x: at.reduce((a, p) => a + x(p), 0) / at.length,
          mean: acc.reduce((a, b) => a + b, 0) / acc.length,
          lo: Math.min(...acc),
          hi: Math.max(...acc),
        },
      ];
    });
  });
}

/**
 * Vega's tableau10, then six dark colours unlike any of its ten: the
 * comparison draws up to 16 families, and a palette that cycled would give
 * two of them the same colour.
 */
const SETTING_COLOURS = [
  '#4c78a8',
  '#f58518',
  '#e45756',
  '#72b7b2',
  '#54a24b',
  '#eeca3b',
  '#b279a2',
  '#ff9da6',
  '#9d755d',
  '#bab0ac',
  '#1b1b1b',
  '#808000',
  '#8b008b',
  '#006d6d',
  '#00008b',
  '#8b4513',
];

function spec(data: Row[], order: readonly string[], xTitle: string, title: string, facet: boolean): TopLevelSpec {
  if (order.length > SETTING_COLOURS.length)
    throw new Error(`plots: ${order.length} settings, but only ${SETTING_COLOURS.length} distinct colours`);
  const color = {
    field: 'scheme',
    type: 'nominal' as const,
    sort: order as string[],
    scale: { domain: order as string[], range: SETTING_COLOURS.slice(0, order.length) },
    title: null,
    legend: { labelLimit: 320 },
  };
  const layered = {
    width: facet ? 300 : 640,
    height: 300,
    layer: [
      {
        mark: { type: 'area' as const, opacity: 0.18, clip: true },
        encoding: {
          x: { field: 'x', type: 'quantitative' as const, title: xTitle, scale: { type: 'log' as const } },
          y: { field: 'lo', type: 'quantitative' as const },
          y2: { field: 'hi' },
          color,
        },
      },
      {
        mark: { type: 'line' as const, strokeWidth: 1.6, clip: true },
        encoding: {
          x: { field: 'x', type: 'quantitative' as const, title: xTitle, scale: { type: 'log' as const } },
          y: {
            field: 'mean',
            type: 'quantitative' as const,
            title: 'test accuracy (mean over seeds; band: min–max)',
            scale: { domain: [0.6, 1] },
            axis: { format: '.0%' },
          },
          color,
        },
      },
    ],
  };
  return (
    facet
      ? {
          $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
          title,
          background: 'white',
          data: { values: data },
          facet: {
            column: { field: 'panel', type: 'nominal', title: null, sort: [...new Set(data.map((d) => d.panel))] },
          },
          spec: layered,
          resolve: { scale: { x: 'independent' } },
        }
      : {
          $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
          title,
          background: 'white',
          data: { values: data },
          ...layered,
        }
  ) as TopLevelSpec;
}

/** A Vega-Lite spec drawn to SVG text. */
export async function toSvg(topLevel: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(topLevel).spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  return svg;
}

/** SVG text of the two plots. */
export async function renderPlots(
  settings: readonly SettingRuns[],
  links: readonly LinkModel[],
  model: ModelKind,
  datasetTitle: string,
): Promise<{ byBytes: string; byTime: string }> {
  const name = `${datasetTitle} ${MODEL_TITLES[model]}`;
  const order = settings.map((s) => s.entry.label);
  const byBytes = rows(settings, 'all', (p) => p.totalMB);
  const byTime = links.flatMap((link, i) =>
    rows(settings, `${link.name}, ${link.latencyMs} ms latency`, (p) => p.seconds[i]!),
  );
  const [bytesSvg, timeSvg] = await Promise.all([
    toSvg(
      spec(
        byBytes,
        order,
        'cumulative MB on the wire, both ways, all workers (log)',
        `${name}: test accuracy per megabyte`,
        false,
      ),
    ),
    toSvg(
      spec(byTime, order, 'simulated seconds (log)', `${name}: test accuracy per simulated second, by network`, true),
    ),
  ]);
  return { byBytes: bytesSvg, byTime: timeSvg };
}
