/**
 * `npm run bench -- tab`: what a student's tab shows on the default run. A
 * lone Chromium tab (WebGPU on SwiftShader, so it calibrates and trains on
 * its faster backend, as in e2e/long-tasks.spec.ts) joins the aggregator
 * `npm start` runs, at the lowest priority as in that test (the teacher's
 * machine), and trains until the run's last round. Every redraw of its time
 * chart gives the last round's compute and compression (unrounded data-*
 * attributes of the card), the chart's mean bands and how many of its drawn
 * rounds have compression below compute; the suite reports, per window of
 * rounds, the mean of the rounds seen and their ratio, and the chart's own
 * figures at the end of each window, for several tabs in a row
 * (docs/benchmarks.md, "A tab's time chart").
 *
 * Options: --tabs N (3), --window R rounds (250), --seconds S per tab (90,
 * a cap: the default run ends at 1,000 rounds), --no-report.
 */
import { chromium, type Page } from '@playwright/test';
import { build } from 'vite';
import { ownServer } from '../../e2e/support/ownServer';
import { chromiumLaunchOptions } from '../chromium';
import { fmt, loadText, markdownTable, suiteOptions, writeSection } from './report';

/**
 * One redraw of the time chart: the last round drawn, its two bands, the
 * chart's means over the rounds drawn, and how many rounds it draws, and of
 * those with compression below compute.
 */
interface Redraw {
  readonly round: number;
  readonly computeMs: number;
  readonly compressMs: number;
  readonly meanComputeMs: number;
  readonly meanCompressMs: number;
  readonly roundsDrawn: number;
  readonly roundsBelow: number;
}

/** One tab's run: its redraws (one per round seen, the last redraw of that round) and its wall time. */
interface TabRun {
  readonly redraws: readonly Redraw[];
  readonly seconds: number;
}

const PORT = 3290;

/**
 * Collects the time chart's redraws in the page itself (a MutationObserver on
 * the card), so none is missed between polls. A string, not a function: the
 * bench runs under tsx, whose transform would wrap a function's inner
 * functions in a helper the page does not have.
 */
const WATCH_TIME_CHART = `(() => {
  const card = document.querySelector('[data-testid="chart-time"]');
  const seen = [];
  window.timeChartRedraws = seen;
  new MutationObserver(() => {
    if (!card.hasAttribute('data-last-round')) return;
    const value = (name) => Number(card.getAttribute('data-' + name));
    seen.push({
      round: value('last-round'),
      computeMs: value('last-compute-ms'),
      compressMs: value('last-compress-ms'),
      meanComputeMs: value('compute-ms'),
      meanCompressMs: value('compress-ms'),
      roundsDrawn: value('rounds-drawn'),
      roundsBelow: value('rounds-compress-below'),
    });
  }).observe(card, { attributes: true });
})()`;

async function watchTimeChart(page: Page): Promise<void> {
  await page.getByTestId('chart-time').waitFor();
  await page.evaluate(WATCH_TIME_CHART);
}

async function runTab(seconds: number): Promise<TabRun> {
  const server = ownServer(PORT, { niceness: 19 });
  await server.start();
  const browser = await chromium.launch(chromiumLaunchOptions('swiftshader'));
  try {
    const page = await browser.newPage();
    await page.goto(`${server.baseURL}/`);
    await watchTimeChart(page);
    const started = Date.now();
    let last = -1;
    while (Date.now() - started < seconds * 1000) {
      await page.waitForTimeout(2000);
      const round = Number(await page.getByTestId('round').getAttribute('data-value'));
      const phase = await page.getByTestId('phase').getAttribute('data-phase');
      process.stdout.write(`\r  ${((Date.now() - started) / 1000).toFixed(0)} s: round ${round} (${phase})   `);
      // The run has ended (its last round is 999), or the tab has stopped moving.
      if (round >= 999 || (round === last && phase !== 'calibrating' && round > 0)) break;
      last = round;
    }
    process.stdout.write('\n');
    const raw = (await page.evaluate('window.timeChartRedraws')) as Redraw[];
    // One redraw per round: the last one seen for it.
    const byRound = new Map<number, Redraw>();
    for (const redraw of raw) byRound.set(redraw.round, redraw);
    return { redraws: [...byRound.values()].sort((a, b) => a.round - b.round), seconds: (Date.now() - started) / 1000 };
  } finally {
    await browser.close();
    await server.dispose();
  }
}

/**
 * Per window of `window` rounds: the rounds seen, their mean compute and
 * compression, and at the window's end the chart's mean bands and its drawn
 * rounds with compression below compute.
 */
function windows(run: TabRun, window: number): string[][] {
  const rows: string[][] = [];
  const last = run.redraws[run.redraws.length - 1]?.round ?? -1;
  for (let from = 0; from <= last; from += window) {
    const seen = run.redraws.filter((r) => r.round >= from && r.round < from + window);
    if (seen.length === 0) continue;
    const compute = seen.reduce((sum, r) => sum + r.computeMs, 0) / seen.length;
    const compress = seen.reduce((sum, r) => sum + r.compressMs, 0) / seen.length;
    const end = seen[seen.length - 1]!;
    rows.push([
      `${from}–${Math.min(from + window, last + 1) - 1}`,
      String(seen.length),
      fmt(compute),
      fmt(compress),
      `${fmt(compress / compute, 2)}×`,
      `${fmt(end.meanCompressMs / end.meanComputeMs, 2)}×`,
      `${end.roundsBelow} of ${end.roundsDrawn}`,
    ]);
  }
  return rows;
}

const HEADER = [
  'tab',
  'rounds',
  'rounds seen',
  'compute ms',
  'compress ms',
  'compress / compute',
  "chart's mean bands",
  'drawn with compress < compute',
];

export async function benchTab(): Promise<void> {
  const values = suiteOptions({
    tabs: { type: 'string', default: '3' },
    window: { type: 'string', default: '250' },
    seconds: { type: 'string', default: '90' },
    'no-report': { type: 'boolean', default: false },
  });
  const tabs = Number(values.tabs);
  const window = Number(values.window);
  const seconds = Number(values.seconds);
  console.log('building the client (as npm start does)…');
  await build({ configFile: 'vite.config.ts', logLevel: 'warn' });
  const loadBefore = loadText();
  const rows: string[][] = [];
  for (let tab = 1; tab <= tabs; tab++) {
    console.log(`tab ${tab} of ${tabs}`);
    const run = await runTab(seconds);
    const tabRows = windows(run, window).map((row) => [String(tab), ...row]);
    console.log(markdownTable(HEADER, tabRows));
    rows.push(...tabRows);
  }
  if (values['no-report'] === true) return;
  writeSection('tab', {
    title: "A tab's time chart",
    command: `npm run bench -- tab --tabs ${tabs} --window ${window} --seconds ${seconds}`,
    loadBefore,
    how: [
      `${tabs} lone Chromium tabs, one after another, each ${seconds} s ` +
        `on the default run (MLP, spectral ATOMO, s = 2, ` +
        'batch 32; SwiftShader, so it trains on the CPU) of the aggregator `npm start` runs, at niceness 19.',
      'Per window of rounds: the mean compute and compression of ' +
        'the rounds the chart redrew with (about one in twenty), ' +
        "their ratio, the ratio of the chart's own mean bands at the window's end, and how many drawn rounds have",
      "compression below compute. Compression is the tab's band (scheme, statistics, encoding); compute is the " +
        "minibatch, forward and backward. One seed; left out: a classroom's other tabs, other devices.",
    ],
    header: HEADER,
    rows,
  });
}
