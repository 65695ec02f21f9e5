/**
 * docs/results.md from the comparison's histories: the table, the
 * equal-bytes figures and the plots (docs/results-*.svg|png). The generated
 * part sits between markers, so the written analysis around it survives a rerun.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { summarise, type HistorySummary, type SwarmHistory } from '../swarm/history';
import { fmt, markdownTable } from '../bench/report';
import { renderPlots, type PlotRun } from './plots';
import { svgsToPngs } from './png';

const REPORT = 'docs/results.md';
const START = '<!-- compare:start -->';
const END = '<!-- compare:end -->';
const TARGET = 0.9;
const PLOTS = { byRound: 'results-accuracy-by-round', byBytes: 'results-accuracy-by-bytes' } as const;

const PREAMBLE = `# Results: ATOMO against QSGD, TernGrad and entry-wise sparsification

The paper's question on our data: at equal bytes, does spectral ATOMO train
faster than entry-wise sparsification, QSGD and TernGrad?
`;

const mb = (bytes: number | null) => (bytes === null ? 'not reached' : fmt(bytes / 1e6));
const pct = (x: number | null) => (x === null ? '—' : `${(100 * x).toFixed(1)}%`);

/** Test accuracy of the last evaluation made before `bytes` upstream bytes had been sent. */
function accuracyAtBytes(history: SwarmHistory, bytes: number): number | null {
  let accuracy: number | null = null;
  for (const r of history.rounds) {
    if (r.cumulativeBytesUp > bytes) break;
    if (r.testAccuracy !== null) accuracy = r.testAccuracy;
  }
  return accuracy;
}

function table(runs: readonly (PlotRun & { summary: HistorySummary })[], dense: number): string {
  const rows = runs.map(({ entry, summary }) => [
    entry.label,
    pct(summary.finalAccuracy),
    summary.roundsToTarget === null ? 'not reached' : String(summary.roundsToTarget),
    mb(summary.bytesUpToTarget),
    fmt(summary.meanNormalisedVariance),
    fmt(summary.meanNormalisedRealised),
    fmt(summary.meanBytesUpPerRound / 1e3),
    dense > 0 ? `${fmt(dense / summary.meanBytesUpPerRound)}×` : '—',
  ]);
  return markdownTable(
    [
      'scheme',
      'final test acc.',
      `rounds to ${TARGET * 100}%`,
      `MB up to ${TARGET * 100}%`,
      'mean rel. variance (closed form)',
      'mean rel. variance (realised)',
      'kB up per round (all workers)',
      'compression vs float32',
    ],
    rows,
  );
}

function equalBytes(runs: readonly (PlotRun & { summary: HistorySummary })[]): string {
  const budget = Math.min(...runs.map((r) => r.summary.totalBytesUp));
  const rows = runs.map(({ entry, history }) => {
    const accuracy = accuracyAtBytes(history, budget);
    return [entry.label, accuracy === null ? 'no evaluation yet' : pct(accuracy)];
  });
  return `Test accuracy once each run had sent ${fmt(budget / 1e6)} MB upstream (the total of the thriftiest run):\n\n${markdownTable(['scheme', `accuracy at ${fmt(budget / 1e6)} MB`], rows)}`;
}

function bytesRatios(runs: readonly (PlotRun & { summary: HistorySummary })[]): string {
  const reached = (scheme: string) => runs.filter((r) => r.entry.scheme === scheme && r.summary.bytesUpToTarget !== null);
  const best = (scheme: string) =>
    reached(scheme).reduce<(PlotRun & { summary: HistorySummary }) | null>((a, b) => (a === null || (b.summary.bytesUpToTarget ?? Infinity) < (a.summary.bytesUpToTarget ?? Infinity) ? b : a), null);
  const spectral = best('atomo-svd');
  if (spectral === null) return `No spectral ATOMO run reached ${TARGET * 100}%: no byte ratios.`;
  const base = spectral.summary.bytesUpToTarget ?? 1;
  const lines = (['atomo-entry', 'atomo-dct', 'qsgd', 'terngrad', 'none'] as const).map((scheme) => {
    const rival = best(scheme);
    const name = runs.find((r) => r.entry.scheme === scheme)?.entry.label ?? scheme;
    if (rival === null) return `- ${name}: did not reach ${TARGET * 100}% in these rounds.`;
    return `- best ${rival.entry.label}: ${mb(rival.summary.bytesUpToTarget)} MB, ${fmt((rival.summary.bytesUpToTarget ?? 0) / base)}× spectral's bytes.`;
  });
  return [`Upstream bytes to ${TARGET * 100}% relative to the best spectral run (${spectral.entry.label}, ${mb(base)} MB):`, '', ...lines].join('\n');
}

/** The command that trains these histories (read back from them, so --report-only names the right one). */
function commandOf(history: SwarmHistory): string {
  const { config } = history;
  return `npm run compare -- --workers ${history.workers} --rounds ${config.maxRounds}${config.seed === 1 ? '' : ` --seed ${config.seed}`}${
    config.evalEvery === 5 ? '' : ` --eval-every ${config.evalEvery}`
  }`;
}

/** Writes the plots and the generated section of docs/results.md. */
export async function writeResults(runs: readonly PlotRun[]): Promise<void> {
  if (runs.length === 0) throw new Error('no comparison histories in results/compare/: run the compare first');
  const summarised = runs.map((run) => ({ ...run, summary: summarise(run.history.rounds, TARGET) }));
  const dense = summarised.find((r) => r.entry.scheme === 'none')?.summary.meanBytesUpPerRound ?? 0;
  const { byRound, byBytes } = await renderPlots(runs);
  writeFileSync(`docs/${PLOTS.byRound}.svg`, byRound);
  writeFileSync(`docs/${PLOTS.byBytes}.svg`, byBytes);
  const pngs = await svgsToPngs([byRound, byBytes]);
  if (pngs !== null) {
    writeFileSync(`docs/${PLOTS.byRound}.png`, pngs[0]!);
    writeFileSync(`docs/${PLOTS.byBytes}.png`, pngs[1]!);
  }
  const first = runs[0]!.history;
  const { config } = first;
  const command = commandOf(first);
  const generated = [
    START,
    `Generated ${new Date().toISOString().slice(0, 10)} by \`${command}\` (then \`npm run compare -- --report-only\` redraws from results/compare/).`,
    `Setup: ${first.workers} headless workers (worker threads, CPU backend) on one in-process aggregator, ${config.model.toUpperCase()} on the 10,000 MNIST digits of the \`mnist\` package (held-out test split), IID split into ${config.shards} shards, batch ${config.batchSize} per worker, SGD learning rate ${config.learningRate}, momentum ${config.momentum}, seed ${config.seed}, ${Math.max(...runs.map((r) => r.history.rounds.length))} rounds, test accuracy every ${config.evalEvery} rounds (so "rounds to ${TARGET * 100}%" has that resolution). Bytes are what the server received, measured per message; machine: ${cpus().length} CPU cores.`,
    '',
    table(summarised, dense),
    '',
    'Relative variance is Σ over layers of E‖ĝ − g‖² divided by Σ‖g‖², averaged over workers and rounds; "closed form" is Σ λᵢ²(1/pᵢ − 1), "realised" the measured ‖ĝ − g‖².',
    '',
    bytesRatios(summarised),
    '',
    equalBytes(summarised),
    '',
    `![test accuracy per round](${PLOTS.byRound}.svg)`,
    '',
    `![test accuracy per upstream megabyte](${PLOTS.byBytes}.svg)`,
    ...(pngs === null ? [] : ['', `PNG copies: [${PLOTS.byRound}.png](${PLOTS.byRound}.png), [${PLOTS.byBytes}.png](${PLOTS.byBytes}.png).`]),
    END,
  ].join('\n');
  const current = existsSync(REPORT) ? readFileSync(REPORT, 'utf8') : `${PREAMBLE}\n${START}\n${END}\n`;
  const from = current.indexOf(START);
  const to = current.indexOf(END);
  const next = from >= 0 && to > from ? current.slice(0, from) + generated + current.slice(to + END.length) : `${current.trimEnd()}\n\n${generated}\n`;
  writeFileSync(REPORT, next);
  console.log(`wrote ${REPORT} and docs/${PLOTS.byRound}.svg, docs/${PLOTS.byBytes}.svg${pngs === null ? '' : ' (+ PNG)'}`);
}
