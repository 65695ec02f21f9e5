/**
 * The comparison's report: the tables and plots between markers in a
 * markdown file (docs/results.md by default), so the written analysis around
 * them survives a rerun.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import type { ModelKind } from '../../core/model';
import type { LinkModel } from '../../core/traffic/linkModel';
import { fmt, markdownTable } from '../bench/report';
import { renderPlots, type SettingRuns } from './plots';
import { svgsToPngs } from './png';
import { TARGETS, accuracyAtMB, reach, spread, type Spread } from './stats';

/** The markers of the generated section: one pair per model, so the MLP's and the CNN's live in one file. */
function markers(model: ModelKind): { start: string; end: string } {
  const tag = model === 'mlp' ? 'compare' : `compare-${model}`;
  return { start: `<!-- ${tag}:start -->`, end: `<!-- ${tag}:end -->` };
}

const MODEL_TEXT: Readonly<Record<ModelKind, string>> = {
  mlp: 'MLP 784-128-10',
  cnn: 'LeNet-style CNN (conv 5×5 8 channels, pool, conv 5×5 16 channels, pool, dense 256→10)',
  'mlp-wide': 'wide MLP 784-1024-256-10 (1,068,810 parameters)',
};

/** What the run was, for the report's first lines. */
export interface CompareSetup {
  readonly command: string;
  readonly model: ModelKind;
  /** Training runs whose time is summed in wallSeconds. */
  readonly runs: number;
  readonly workers: number;
  readonly rounds: number;
  readonly evalEvery: number;
  readonly seeds: readonly number[];
  readonly batchSize: number;
  readonly learningRate: number;
  readonly momentum: number;
  readonly wallSeconds: number;
  readonly cores: number;
  /** The 1-minute load average at the starts and ends of those runs: lowest and highest. */
  readonly loadAverage: { readonly min: number; readonly max: number };
}

const pm = (s: Spread, digits = 3, scale = 1) =>
  s.mean === null ? '—' : `${fmt(s.mean * scale, digits)} ± ${fmt((s.sd ?? 0) * scale, 2)}`;
const reached = (s: Spread, of: number) => (s.n === of ? '' : ` (${s.n}/${of})`);
const pct = (s: Spread) =>
  s.mean === null ? '—' : `${(100 * s.mean).toFixed(1)} ± ${(100 * (s.sd ?? 0)).toFixed(1)}%`;

function settingsTable(settings: readonly SettingRuns[], workers: number): string {
  const rows = settings.map(({ entry, seeds }) => {
    const n = seeds.length;
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
      fmt(entry.expectedBytes / 1e3),
      pm(measured),
      pct(spread(seeds.map((s) => s.at(-1)?.accuracy ?? null))),
    ];
    for (const target of TARGETS) {
      const hits = seeds.map((s) => reach(s, target));
      const rounds = spread(hits.map((h) => h?.round ?? null));
      cells.push(rounds.n === 0 ? 'not reached' : `${pm(rounds)}${reached(rounds, n)}`);
    }
    const at90 = seeds.map((s) => reach(s, 0.9));
    const up = spread(at90.map((h) => h?.uplinkMB ?? null));
    const total = spread(at90.map((h) => h?.totalMB ?? null));
    cells.push(
      up.n === 0 ? '—' : `${pm(up)}${reached(up, n)}`,
      total.n === 0 ? '—' : `${pm(total)}${reached(total, n)}`,
    );
    return cells;
  });
  return markdownTable(
    [
      'setting',
      'gradient kB per worker-round (expected)',
      'uplink kB per worker-round (measured, wire)',
      'final test acc.',
      ...TARGETS.map((t) => `rounds to ${t * 100}%`),
      'uplink MB to 90%',
      'total MB to 90%',
    ],
    rows,
  );
}

function timeTable(settings: readonly SettingRuns[], links: readonly LinkModel[]): string {
  const header = ['setting', ...links.flatMap((link) => TARGETS.map((t) => `${link.name}: s to ${t * 100}%`))];
  const rows = settings.map(({ entry, seeds }) => [
    entry.label,
    ...links.flatMap((_, i) =>
      TARGETS.map((target) => {
        const s = spread(seeds.map((p) => reach(p, target)?.seconds[i] ?? null));
        return s.n === 0 ? 'not reached' : `${pm(s)}${reached(s, seeds.length)}`;
      }),
    ),
  ]);
  return markdownTable(header, rows);
}

/**
 * Per link: the setting that reaches the target first (most seeds reaching it, then mean simulated time), with its
 * traffic.
 */
export function winnersTable(settings: readonly SettingRuns[], links: readonly LinkModel[], target = 0.9): string {
  const rows = links.flatMap((link, i) => {
    const ranked = settings
      .map(({ entry, seeds }) => {
        const hits = seeds.map((s) => reach(s, target));
        return {
          entry,
          time: spread(hits.map((h) => h?.seconds[i] ?? null)),
          total: spread(hits.map((h) => h?.totalMB ?? null)),
          of: seeds.length,
        };
      })
      .filter((r) => r.time.mean !== null)
      // A setting that got there with every seed ranks before one that did with fewer, then by mean time.
      .sort((a, b) => b.time.n - a.time.n || a.time.mean! - b.time.mean!);
    if (ranked.length === 0)
      return [[`${link.name} (${link.latencyMs} ms)`, `nobody reached ${target * 100}%`, '—', '—', '—']];
    const [first, second] = ranked;
    return [
      [
        `${link.name} (${link.latencyMs} ms)`,
        `${first!.entry.label}${reached(first!.time, first!.of)}`,
        pm(first!.time),
        pm(first!.total),
        second === undefined ? '—' : `${second.entry.label}: ${pm(second.time)} s, ${pm(second.total)} MB`,
      ],
    ];
  });
  return markdownTable(
    ['link (per worker, both ways)', `first to ${target * 100}%`, 'simulated s', 'total MB both ways', 'runner-up'],
    rows,
  );
}

function matchedBytes(settings: readonly SettingRuns[]): string {
  // The largest traffic every run got to: its last evaluation's total, minimised; once over every setting, and
  // once over those whose model goes down in full (a compressed downlink is so much thriftier that, alone, it
  // would set a budget the others spend in their first few rounds).
  const thriftiest = (of: readonly SettingRuns[]) =>
    Math.min(...of.flatMap(({ seeds }) => seeds.map((s) => s.at(-1)?.totalMB ?? Infinity)));
  const budgets = [thriftiest(settings)];
  const full = settings.filter(({ entry }) => entry.downlink === 'full');
  if (full.length > 0 && full.length < settings.length) budgets.push(thriftiest(full));
  const rows = settings.map(({ entry, seeds }) => [
    entry.label,
    ...budgets.map((budget) => pct(spread(seeds.map((s) => accuracyAtMB(s, budget))))),
  ]);
  const header = [
    'setting',
    ...budgets.map((budget, i) => `accuracy at ${fmt(budget)} MB${i === 0 ? '' : ' (thriftiest full-downlink run)'}`),
  ];
  return `Test accuracy at matched traffic both ways (the total of the thriftiest run's last evaluation: the accuracy of each run's last evaluation within it), mean ± sd over seeds; "—" where a run had not been evaluated yet within that traffic:\n\n${markdownTable(header, rows)}`;
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
  const { byBytes, byTime } = await renderPlots(settings, links, setup.model);
  const prefix = setup.model === 'mlp' ? 'results' : `results-${setup.model}`;
  const names = { bytes: `${prefix}-accuracy-by-mb`, time: `${prefix}-accuracy-by-time` };
  const { start: START, end: END } = markers(setup.model);
  const heading = setup.model === 'mlp' ? '' : `${setup.model.toUpperCase()}: `;
  writeFileSync(join(dir, `${names.bytes}.svg`), byBytes);
  writeFileSync(join(dir, `${names.time}.svg`), byTime);
  const png = pngs ? await svgsToPngs([byBytes, byTime]) : null;
  if (png !== null) {
    writeFileSync(join(dir, `${names.bytes}.png`), png[0]!);
    writeFileSync(join(dir, `${names.time}.png`), png[1]!);
  }
  const winners = winnersTable(settings, links);
  const generated = [
    START,
    `Generated ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC by \`${setup.command}\`; the comparison took ${fmt(setup.wallSeconds / 60)} min of wall-clock time (${setup.runs} training runs, one after the other) on ${setup.cores} CPU cores shared with other work (1-minute load average ${fmt(setup.loadAverage.min)}–${fmt(setup.loadAverage.max)} at the runs' starts and ends).`,
    '',
    `Setup: ${setup.workers} headless workers (the tab's own session in Node worker threads, CPU backend) on one in-process aggregator; ${MODEL_TEXT[setup.model]} on the 10,000 MNIST digits of the \`mnist\` package (held-out test split); IID shards; batch ${setup.batchSize} per worker; SGD learning rate ${setup.learningRate}, momentum ${setup.momentum}; ${setup.rounds} rounds; test accuracy every ${setup.evalEvery} rounds (the resolution of every "to x%" figure); seeds ${setup.seeds.join(', ')} (each seed changes the initial weights, the shards, the minibatches and every random draw). Figures are mean ± sample standard deviation over the seeds that reached the target; (k/${setup.seeds.length}) says how many did when not all. Megabytes are every WebSocket frame both ways as the server counted them (payload, socket.io envelope and framing; the float32 model goes down every round unless the setting names a compressed downlink). Simulated seconds add, per round, the slowest worker's measured compute and compression time, its download and upload at the link's bandwidth plus latency, and the server's decode and update time (core/traffic/linkModel.ts); compute times were measured on this loaded machine, so they are slower than on an idle one.`,
    '',
    `### ${heading}Which setting reaches 90% first, per link speed`,
    '',
    winners,
    '',
    `### ${heading}Which setting reaches 85% first, per link speed`,
    '',
    winnersTable(settings, links, 0.85),
    '',
    `### ${heading}Every setting`,
    '',
    settingsTable(settings, setup.workers),
    '',
    `### ${heading}Simulated time to each target, per link speed`,
    '',
    timeTable(settings, links),
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
