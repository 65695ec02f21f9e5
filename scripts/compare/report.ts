/**
 * The comparison's report: the tables and plots between markers in a
 * markdown file (docs/results.md by default), so the written analysis around
 * them survives a rerun.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { DATASETS } from '../../core/data/datasets';
import type { LinkModel } from '../../core/traffic/linkModel';
import { fmt, markdownTable } from '../bench/report';
import { renderPlots, type SettingRuns } from './plots';
import { percent, setupParagraph, type CompareSetup } from './setupText';

import { againstSpectralTable, roundPartsPlot, roundPartsTable, speedUpTable } from './speedUp';
import { svgsToPngs } from './png';
import { varianceTable } from './varianceTable';
import { MODEL_TITLES, taskHeading, taskTag, type CompareTask } from './task';
import { ruleText } from './schemes';
import {
  accuracyAtMB,
  atTarget,
  censoredMean,
  spread,
  type CensoredMean,
  type EvalPoint,
  type SettingTimes,
  type Spread,
} from './stats';

/** The markers of the generated section: one pair per task, so every task's section lives in one file. */
function markers(task: CompareTask): { start: string; end: string } {
  const tag = `compare${taskTag(task)}`;
  return { start: `<!-- ${tag}:start -->`, end: `<!-- ${tag}:end -->` };
}

const pm = (s: Spread, digits = 3, scale = 1) =>
  s.mean === null ? '—' : `${fmt(s.mean * scale, digits)} ± ${fmt((s.sd ?? 0) * scale, 2)}`;
const pct = (s: Spread) =>
  s.mean === null ? '—' : `${(100 * s.mean).toFixed(1)} ± ${(100 * (s.sd ?? 0)).toFixed(1)}%`;

/**
 * A restricted mean with its interval: `≥` and "(k/n censored)" when k runs never got there and count at their end.
 */
export function censoredCell(c: CensoredMean | null, digits = 3): string {
  if (c === null) return '—';
  const bound = c.censored > 0 ? '≥ ' : '';
  const censored = c.censored > 0 ? ` (${c.censored}/${c.n} censored)` : '';
  // Whole numbers (rounds, a constant sample's bounds) print as they are.
  const f = (x: number) => (Number.isInteger(x) ? String(x) : fmt(x, digits));
  return `${bound}${f(c.mean)} [${f(c.lo)}, ${f(c.hi)}]${censored}`;
}

/** A quantity at `target` over a setting's seeds, censored runs counted at their end. */
function toTarget(seeds: readonly (readonly EvalPoint[])[], target: number, pick: (p: EvalPoint) => number) {
  return censoredMean(seeds.map((s) => atTarget(s, target, pick)));
}

/** The learning rate a setting trained with, and whether tuning chose it. */
function lrCell({ learningRates, tuning }: SettingRuns): string {
  const rates = learningRates ?? [];
  const text = rates.length === 0 ? '—' : rates.join(', ');
  return tuning === undefined ? text : `${text} (tuned on seed ${tuning.seed}, ${tuning.workers} workers)`;
}

/**
 * The rule its histories record, with how many of their estimates the norm bound clipped and how many rounds
 * combined fewer than `workers` estimates.
 */
function ruleCell({ entry, aggregation }: SettingRuns, workers: number): string {
  if (aggregation === undefined || aggregation.recorded === 0) return `${ruleText(entry.aggregation)} (not recorded)`;
  const rules = aggregation.rules.map(ruleText).join(', ');
  const clipped = aggregation.rules.some((r) => r.kind === 'norm-bound')
    ? `, ${aggregation.clipped} of ${aggregation.estimates} estimates clipped`
    : '';
  const dropped = aggregation.dropped > 0 ? `, up to ${aggregation.dropped} values per coordinate dropped` : '';
  const short =
    aggregation.shortRounds > 0
      ? `; ${aggregation.shortRounds} of ${aggregation.rounds} rounds with fewer than ${workers} estimates`
      : '';
  return `${rules}${clipped}${dropped}${short}`;
}

function settingsTable(settings: readonly SettingRuns[], workers: number, targets: readonly number[]): string {
  const headline = targets[1]!;
  const rows = settings.map((setting) => {
    const { entry, seeds } = setting;
    // What a worker really sent per round (wire bytes up over the whole run): the expected bytes of the byte-matched
    // budgets come from the layout alone, and a real gradient's saturated entries can cost more.
    const measured = spread(
      seeds.map((s) => {
        const last = s.at(-1);
        return last === undefined ? null : (last.uplinkMB * 1e3) / (last.round * workers);
      }),
    );
    const cells = [
      entry.label,
      lrCell(setting),
      ruleCell(setting, workers),
      fmt(entry.expectedBytes / 1e3),
      pm(measured),
      pct(spread(seeds.map((s) => s.at(-1)?.accuracy ?? null))),
    ];
    for (const target of targets) cells.push(censoredCell(toTarget(seeds, target, (p) => p.round)));
    cells.push(
      censoredCell(toTarget(seeds, headline, (p) => p.uplinkMB)),
      censoredCell(toTarget(seeds, headline, (p) => p.totalMB)),
    );
    return cells;
  });
  return markdownTable(
    [
      'setting',
      'learning rate',
      'aggregation (as recorded)',
      'gradient kB per worker-round (expected)',
      'uplink kB per worker-round (measured, wire)',
      'final test acc.',
      ...targets.map((t) => `rounds to ${percent(t)}`),
      `uplink MB to ${percent(headline)}`,
      `total MB to ${percent(headline)}`,
    ],
    rows,
  );
}

const TIME_SOURCE_TEXT: Readonly<Record<SettingTimes['source'], string>> = {
  calibration: 'calibration',
  'thread-cpu': 'workers, thread CPU',
  wall: 'workers, wall clock',
};

/** "calibration: 1.90 + 1.03 + 0.100 (+ 0.0500) ms": where a setting's step times come from, and their means. */
function timesCell(times: SettingTimes | undefined): string {
  if (times === undefined) return '';
  return (
    `${TIME_SOURCE_TEXT[times.source]}: ${fmt(times.computeMs)} + ${fmt(times.compressMs)} + ` +
    `${fmt(times.encodeMs)} (+ ${fmt(times.applyMs)}) ms`
  );
}

function timeTable(settings: readonly SettingRuns[], links: readonly LinkModel[], targets: readonly number[]): string {
  const header = [
    'setting',
    'times from: compute + compress + encode (+ update) ms',
    ...links.flatMap((link) => targets.map((t) => `${link.name}: s to ${percent(t)}`)),
  ];
  const rows = settings.map(({ entry, seeds, times }) => [
    entry.label,
    timesCell(times),
    ...links.flatMap((_, i) => targets.map((target) => censoredCell(toTarget(seeds, target, (p) => p.seconds[i]!)))),
  ]);
  return markdownTable(header, rows);
}

/**
 * Per link: the setting that reaches the target first (fewest censored runs, then the restricted mean simulated
 * time), with its traffic.
 */
export function winnersTable(settings: readonly SettingRuns[], links: readonly LinkModel[], target: number): string {
  const rows = links.flatMap((link, i) => {
    const ranked = settings
      .map(({ entry, seeds }) => ({
        entry,
        time: toTarget(seeds, target, (p) => p.seconds[i]!),
        total: toTarget(seeds, target, (p) => p.totalMB),
      }))
      .filter((r): r is typeof r & { time: CensoredMean } => r.time !== null && r.time.censored < r.time.n)
      // A setting that got there with every seed ranks before one that did with fewer, then by mean time.
      .sort((a, b) => a.time.censored - b.time.censored || a.time.mean - b.time.mean);
    if (ranked.length === 0)
      return [[`${link.name} (${link.latencyMs} ms)`, `nobody reached ${percent(target)}`, '—', '—', '—']];
    const [first, second] = ranked;
    return [
      [
        `${link.name} (${link.latencyMs} ms)`,
        first!.entry.label,
        censoredCell(first!.time),
        censoredCell(first!.total),
        second === undefined
          ? '—'
          : `${second.entry.label}: ${censoredCell(second.time)} s, ${censoredCell(second.total)} MB`,
      ],
    ];
  });
  return markdownTable(
    ['network', `first to ${percent(target)}`, 'simulated s [95% CI]', 'total MB both ways [95% CI]', 'runner-up'],
    rows,
  );
}

/**
 * The settings the plots draw: per family (a sweep's settings share one), the one that reaches `target` in the
 * fewest rounds (restricted mean), then the highest final accuracy; at most one line per family keeps the plots
 * readable.
 */
export function plottedSettings(settings: readonly SettingRuns[], target: number): SettingRuns[] {
  const score = ({ seeds }: SettingRuns) => ({
    rounds: toTarget(seeds, target, (p) => p.round)?.mean ?? Infinity,
    final: spread(seeds.map((s) => s.at(-1)?.accuracy ?? null)).mean ?? 0,
  });
  const best = new Map<string, SettingRuns>();
  for (const setting of settings) {
    const held = best.get(setting.entry.family);
    if (held === undefined) {
      best.set(setting.entry.family, setting);
      continue;
    }
    const [a, b] = [score(setting), score(held)];
    if (a.rounds < b.rounds || (a.rounds === b.rounds && a.final > b.final)) best.set(setting.entry.family, setting);
  }
  return settings.filter((s) => best.get(s.entry.family) === s);
}

function matchedBytes(settings: readonly SettingRuns[]): string {
  // The largest traffic every run got to: its last evaluation's total, minimised; once over every setting, and
  // once over those whose downlink is exact (the ATOMO-compressed one is so much thriftier that, alone, it would set
  // a budget the others spend in their first few rounds).
  const thriftiest = (of: readonly SettingRuns[]) =>
    Math.min(...of.flatMap(({ seeds }) => seeds.map((s) => s.at(-1)?.totalMB ?? Infinity)));
  const budgets = [thriftiest(settings)];
  const full = settings.filter(({ entry }) => entry.downlink !== 'atomo');
  if (full.length > 0 && full.length < settings.length) budgets.push(thriftiest(full));
  const rows = settings.map(({ entry, seeds }) => [
    entry.label,
    ...budgets.map((budget) => pct(spread(seeds.map((s) => accuracyAtMB(s, budget))))),
  ]);
  const header = [
    'setting',
    ...budgets.map((budget, i) => `accuracy at ${fmt(budget)} MB${i === 0 ? '' : ' (thriftiest exact-downlink run)'}`),
  ];
  return (
    `Test accuracy at matched traffic both ways (the total of the thriftiest run's last evaluation: ` +
    `the accuracy of each run's last evaluation within it), mean ± sd over seeds; ` +
    `"—" where a run had not been evaluated yet within that traffic:\n\n${markdownTable(header, rows)}`
  );
}

/** Writes the plots next to `reportPath` and the generated section into it; returns the headline table. */
export async function writeReport(
  reportPath: string,
  settings: readonly SettingRuns[],
  links: readonly LinkModel[],
  setup: CompareSetup,
  pngs: boolean,
): Promise<string> {
  const dir = dirname(reportPath);
  mkdirSync(dir, { recursive: true });
  const [low, headline] = [setup.targets[0]!, setup.targets[1]!];
  const plotted = plottedSettings(settings, headline);
  const datasetTitle = DATASETS[setup.dataset].title;
  const { byBytes, byTime } = await renderPlots(plotted, links, setup.model, datasetTitle);
  const prefix = `results${taskTag(setup)}`;
  const names = {
    bytes: `${prefix}-accuracy-by-mb`,
    time: `${prefix}-accuracy-by-time`,
    parts: `${prefix}-round-parts`,
  };
  const partsSvg = await roundPartsPlot(
    settings,
    links,
    `${datasetTitle} ${MODEL_TITLES[setup.model]}, ${setup.workers} workers: where a round's simulated time goes`,
  );
  writeFileSync(join(dir, `${names.parts}.svg`), partsSvg);
  const { start: START, end: END } = markers(setup);
  const heading = taskHeading(setup);
  writeFileSync(join(dir, `${names.bytes}.svg`), byBytes);
  writeFileSync(join(dir, `${names.time}.svg`), byTime);
  const png = pngs ? await svgsToPngs([byBytes, byTime]) : null;
  if (png !== null) {
    writeFileSync(join(dir, `${names.bytes}.png`), png[0]!);
    writeFileSync(join(dir, `${names.time}.png`), png[1]!);
  }
  const winners = winnersTable(settings, links, headline);
  const generated = [
    START,
    `Generated ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC by \`${setup.command}\`; ` +
      `the comparison took ${fmt(setup.wallSeconds / 60)} min of wall-clock time ` +
      `(${setup.runs} training runs, one after the other) on ${setup.cores} CPU cores shared with other work ` +
      `(1-minute load average ${fmt(setup.loadAverage.min)}–${fmt(setup.loadAverage.max)} ` +
      `at the runs' starts and ends).`,
    '',
    setupParagraph(setup, settings, links),
    '',
    `### ${heading}Which setting reaches ${percent(headline)} first, per network`,
    '',
    winners,
    '',
    `### ${heading}Speed-up over float32 SGD to ${percent(headline)}, per network`,
    '',
    speedUpTable(settings, links, headline),
    '',
    `### ${heading}Spectral ATOMO's speed-up over each setting to ${percent(headline)}, per network`,
    '',
    againstSpectralTable(settings, links, headline, plotted),
    '',
    `### ${heading}Where a round's time goes, per network`,
    '',
    roundPartsTable(settings, links),
    '',
    `![the mean round's simulated time in its parts, per setting and network](${names.parts}.svg)`,
    '',
    `### ${heading}Which setting reaches ${percent(low)} first, per network`,
    '',
    winnersTable(settings, links, low),
    '',
    `### ${heading}Every setting`,
    '',
    `The plots draw one line per scheme family (${plotted.length} of ${settings.length} settings): the family's ` +
      `setting that reaches ${percent(headline)} in the fewest rounds, then the highest final accuracy.`,
    '',
    settingsTable(settings, setup.workers, setup.targets),
    '',
    `### ${heading}Simulated time to each target, per network`,
    '',
    timeTable(settings, links, setup.targets),
    '',
    `### ${heading}Variance against bytes, on the runs' gradients`,
    '',
    varianceTable(settings),
    '',
    `### ${heading}Accuracy at matched traffic`,
    '',
    matchedBytes(settings),
    '',
    `![test accuracy per megabyte on the wire](${names.bytes}.svg)`,
    '',
    `![test accuracy per simulated second, one panel per link speed](${names.time}.svg)`,
    ...(png === null
      ? []
      : ['', `PNG copies: [${names.bytes}.png](${names.bytes}.png), [${names.time}.png](${names.time}.png).`]),
    END,
  ].join('\n');
  const current = existsSync(reportPath) ? readFileSync(reportPath, 'utf8') : `# Results\n\n${START}\n${END}\n`;
  const from = current.indexOf(START);
  const to = current.indexOf(END);
  const next =
    from >= 0 && to > from
      ? current.slice(0, from) + generated + current.slice(to + END.length)
      : `${current.trimEnd()}\n\n${generated}\n`;
  writeFileSync(reportPath, next);
  console.log(`wrote ${relative(process.cwd(), reportPath)} and its plots`);
  return winners;
}
