/**
 * `npm run swarm -- --workers 8 --scheme atomo-svd --budget 2 --rounds 300 --out results/run.json
 *   [--url http://host:port --token T] [--backend cpu|webgpu] [--levels 4] [--seed 1] [--eval-every 5]
 *   [--model mlp|cnn] [--downlink auto|full|relay|atomo] [--downlink-budget 8] [--lr 0.1]
 *   [--aggregation mean|median|norm-bound[:k]|trimmed-mean[:trim]] [--quiet]`
 *
 * N headless workers, each in its own worker thread, train one run on an
 * in-process aggregator (or the one at --url) through the tab's protocol;
 * prints progress and a summary, and writes the history with --out.
 * --aggregation sets how the server combines the estimates (its default, the
 * norm bound k = 3, when absent); --lr the SGD learning rate; --downlink how
 * the model goes down (the server's default, `auto`, when absent).
 */
import { parseSwarmArgs } from './options';
import { summarise } from './history';
import { runSwarm } from './runSwarm';

let options;
try {
  options = parseSwarmArgs(process.argv.slice(2));
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(2);
}
const history = await runSwarm(options).catch((error: unknown) => {
  console.error(`swarm failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
const summary = summarise(history.rounds, 0.9);
const pct = (x: number | null) => (x === null ? '—' : `${(100 * x).toFixed(2)}%`);
const budgetText =
  history.config.byteBudget === undefined
    ? `budget ${history.config.budget}`
    : `${history.config.byteBudget} B per round`;
const feedbackText = history.config.errorFeedback === true ? ', error feedback (biased)' : '';
const reachedText =
  summary.roundsToTarget === null
    ? 'not reached'
    : `round ${summary.roundsToTarget}, ${((summary.wireToTarget ?? 0) / 1e6).toFixed(2)} MB on the wire both ways`;
console.log(
  [
    `run ${history.runId}: ${history.config.scheme} (${budgetText}, levels ${history.config.levels}${feedbackText}), ` +
      `${history.workers} ${history.backend} workers`,
    `  rounds:            ${summary.rounds} in ${history.wallSeconds.toFixed(1)} s ` +
      `(${(summary.rounds / history.wallSeconds).toFixed(1)} rounds/s)`,
    `  final test acc:    ${pct(summary.finalAccuracy)}`,
    `  90% reached:       ${reachedText}`,
    `  gradient payload:  ${(summary.totalBytesUp / 1e6).toFixed(2)} MB total, ` +
      `${(summary.meanBytesUpPerRound / 1e3).toFixed(1)} kB per round`,
    `  on the wire:       ${(summary.totalWire / 1e6).toFixed(2)} MB both ways ` +
      `(every frame, envelope and framing included)`,
    `  variance (rel.):   closed form ${summary.meanNormalisedVariance.toPrecision(3)}, ` +
      `realised ${summary.meanNormalisedRealised.toPrecision(3)}`,
    ...(options.out === undefined ? [] : [`  history:           ${options.out}`]),
  ].join('\n'),
);
process.exit(0);
