/**
 * `npm run compare -- --workers 8 --rounds 300 [--seed 1] [--eval-every 5] [--only svd-2,qsgd-4] [--report-only]`
 *
 * Trains one swarm run per scheme of COMPARE_ENTRIES, one after the other on
 * one in-process aggregator (two cores: running them side by side would only
 * slow each down), same seed and data split, CPU backend; keeps each history
 * in results/compare/<id>.json, then writes docs/results.md and its plots.
 * --report-only redraws the report from the histories already there.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { SwarmHistory } from '../swarm/history';
import { startLocalAggregator } from '../swarm/aggregator';
import { runSwarm } from '../swarm/runSwarm';
import { COMPARE_ENTRIES, type CompareEntry } from './schemes';
import { writeResults } from './report';

const RESULTS_DIR = 'results/compare';

const { values } = parseArgs({
  options: {
    workers: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '300' },
    seed: { type: 'string', default: '1' },
    'eval-every': { type: 'string', default: '5' },
    only: { type: 'string' },
    'report-only': { type: 'boolean', default: false },
  },
  strict: true,
});
const workers = Number(values.workers);
const rounds = Number(values.rounds);
const seed = Number(values.seed);
const evalEvery = Number(values['eval-every']);
if (![workers, rounds, seed, evalEvery].every((n) => Number.isInteger(n) && n > 0)) {
  console.error('--workers, --rounds, --seed and --eval-every must be positive integers');
  process.exit(2);
}
const only = values.only?.split(',');
const entries = only === undefined ? COMPARE_ENTRIES : COMPARE_ENTRIES.filter((e) => only.includes(e.id));
const historyPath = (entry: CompareEntry) => `${RESULTS_DIR}/${entry.id}.json`;

if (!values['report-only']) {
  const aggregator = await startLocalAggregator();
  try {
    for (const entry of entries) {
      const history = await runSwarm(
        { workers, scheme: entry.scheme, budget: entry.budget, levels: entry.levels, bucketSize: 0, rounds, seed, evalEvery, backend: 'cpu', name: entry.label, out: historyPath(entry), progress: true },
        aggregator,
      );
      console.log(`${entry.label}: ${history.rounds.length} rounds in ${history.wallSeconds.toFixed(0)} s`);
    }
  } finally {
    await aggregator.close();
  }
}

// The report always covers every entry that has a history, so --only reruns one scheme and keeps the others.
const runs = COMPARE_ENTRIES.filter((e) => existsSync(historyPath(e))).map((entry) => ({
  entry,
  history: JSON.parse(readFileSync(historyPath(entry), 'utf8')) as SwarmHistory,
}));
await writeResults(runs);
process.exit(0);
