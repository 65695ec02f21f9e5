/**
 * The words of a comparison's generated section: what was trained, how, and
 * how its figures were measured, from the run's own setup.
 */
import { BOOTSTRAP_RESAMPLES } from './stats';
import { describeLink, type LinkModel } from '../../core/traffic/linkModel';
import type { DatasetName } from '../../core/data/datasets';
import type { ModelKind } from '../../core/model';
import type { SettingRuns } from './plots';
import type { CompareOptions } from './runCompare';
import { COMPARE_AGGREGATION, ruleText } from './schemes';
import { COMPARE_ROUND_DEADLINE_MS, type CompareTask } from './task';
import { tuningRule } from './tuning';

/** A target as the tables print it: 0.9 → "90%". */
export const percent = (target: number) => `${+(target * 100).toFixed(1)}%`;

/** Each model in words. */
const MODEL_TEXT: Readonly<Record<ModelKind, string>> = {
  mlp: 'MLP 784-128-10',
  cnn: 'LeNet-style CNN (conv 5×5 8 channels, pool, conv 5×5 16 channels, pool, dense 256→10)',
  'mlp-wide': 'wide MLP 784-1024-256-10 (1,068,810 parameters)',
};

/** The images each dataset's comparison trains and evaluates on, in words (COMPARE_EVAL_EXAMPLES held out). */
const DATASET_TEXT: Readonly<Record<DatasetName, string>> = {
  mnist:
    'the 10,000 MNIST digits of the `mnist` package (8,000 to train, 2,000 held out), test accuracy on the 2,000 ' +
    'held-out digits',
  fashion:
    'Fashion-MNIST\'s 60,000 training images (the `fashion-mnist` package; docs/design.md, "Datasets"), test ' +
    'accuracy on the first 2,000 of its 10,000 test images (a uniform sample: the split is stored shuffled)',
};

/** What the run was, for the report's first lines: the options it ran with, and what it measured. */
export interface CompareSetup
  extends CompareTask, Pick<CompareOptions, 'command' | 'rounds' | 'evalEvery' | 'seeds' | 'tuning' | 'tuningFrom'> {
  /** Training runs whose time is summed in wallSeconds. */
  readonly runs: number;
  readonly batchSize: number;
  /**
   * The accuracy targets (the headline one in the middle), and the points below each within which the server
   * evaluated every round.
   */
  readonly targets: readonly number[];
  readonly evalNearWithin: number;
  readonly momentum: number;
  readonly wallSeconds: number;
  readonly cores: number;
  /** The 1-minute load average at the starts and ends of those runs: lowest and highest. */
  readonly loadAverage: { readonly min: number; readonly max: number };
}

/** The training and the statistics, for the setup paragraph. */
function trainingText(setup: CompareSetup, aggregationText: string): string {
  const targets = setup.targets.map(percent).join(', ');
  return [
    `SGD with momentum ${setup.momentum} and ${lrText(setup)}; ${aggregationText}; ${setup.rounds} rounds;`,
    `test accuracy every ${setup.evalEvery} rounds, and every round while the last one was within`,
    `${+(setup.evalNearWithin * 100).toFixed(1)} points below a target (${targets}; the resolution of every`,
    `"to x%" figure); seeds ${setup.seeds.join(', ')} (each seed changes the initial weights, the shards, the`,
    'minibatches and every random draw). Figures to a target are restricted means over all seeds with',
    `percentile-bootstrap 95% intervals in brackets (${BOOTSTRAP_RESAMPLES} resamples, a fixed generator): a run`,
    'that never reached the target counts at its end, so the figure is a lower bound (≥) and "(k/n censored)"',
    'says how many runs did not get there; other figures are mean ± sample standard deviation.',
  ].join(' ');
}

/** How the settings' learning rates were chosen. */
function lrText(setup: CompareSetup): string {
  if (setup.tuningFrom !== undefined)
    return (
      `each setting's learning rate as the tuning in ${setup.tuningFrom} chose it (the same model and dataset with ` +
      'the workers the learning-rate column names; tuning.json beside the histories keeps its record)'
    );
  if (setup.tuning === null) return 'the learning rate in each row';
  return (
    `a learning rate per setting chosen from ${setup.tuning.learningRates.join(', ')} on tuning seed ` +
    `${setup.tuning.seed}, which no reported run uses (${tuningRule(setup.targets[1]!)}; tuning.json beside the ` +
    `histories keeps every candidate's result)`
  );
}

/** How the settings' models come down, in words. */
function downlinkText(setup: CompareSetup): string {
  switch (setup.downlink ?? 'auto') {
    case 'auto':
      return (
        "the model comes down by the server's default downlink, `auto` (each worker gets the smaller of the round's " +
        'relayed gradients and the float32 model, bit-identical either way)'
      );
    case 'full':
      return "the float32 model comes down to every worker every round (`full`, the paper's parameter server)";
    case 'relay':
      return "the round's relayed gradients come down to every worker (`relay`)";
    case 'atomo':
      return 'the ATOMO-compressed model comes down to every worker (`atomo`)';
  }
}

/** The setup paragraph of a comparison's section. */
export function setupParagraph(
  setup: CompareSetup,
  settings: readonly SettingRuns[],
  links: readonly LinkModel[],
): string {
  // The rule of the comparison, and the settings that name another.
  const others = settings.filter((st) => JSON.stringify(st.entry.aggregation) !== JSON.stringify(COMPARE_AGGREGATION));
  const aggregationText =
    `the server combines each round's estimates by the ${ruleText(COMPARE_AGGREGATION)}` +
    ` (docs/design.md, "Aggregation")` +
    (others.length === 0
      ? ''
      : `, except ${others.map((st) => `${st.entry.label} (${ruleText(st.entry.aggregation)})`).join(', ')}`) +
    `; a round waits for all ${setup.workers} workers (a ${COMPARE_ROUND_DEADLINE_MS / 60_000}-minute deadline: ` +
    "the time is the link model's), and the aggregation column counts any round that combined fewer estimates";
  return (
    `Setup: ${setup.workers} headless workers (the tab's own session in Node worker threads, CPU backend) on one ` +
    `in-process aggregator; ${MODEL_TEXT[setup.model]} on ${DATASET_TEXT[setup.dataset]}; ` +
    `IID shards; batch ${setup.batchSize} per worker; ` +
    `${trainingText(setup, aggregationText)} ` +
    'Megabytes are every WebSocket frame both ways as the server counted them (payload, socket.io envelope and ' +
    `framing); ${downlinkText(setup)}, unless the label names another (docs/protocol.md, "Downlink"). ` +
    "Simulated seconds are the link model's round time (core/traffic/linkModel.ts; docs/protocol.md, " +
    '"Traffic and the link model"): per round, the slower of one worker\'s download, compute (with compression ' +
    "and encoding) and upload on its own link and the slowest compute followed by the server link's time for " +
    "every worker's messages, plus both latencies and the server's " +
    `decode and update time. Networks: ${links.map((link) => `${link.name}: ${describeLink(link)}`).join('; ')}. ` +
    'The step times come from where the time table\'s "times from" column says (docs/design.md, "Where the ' +
    "comparison's times come from\"): a calibration, each setting's compression and encoding and the model's " +
    "compute timed on the comparison's main thread's own CPU clock before any worker thread runs (medians of " +
    "blocks of steps, scripts/compare/calibration.ts), or else the workers' own thread CPU times as each round " +
    'recorded them (docs/protocol.md, "Worker times"); the replica\'s update (compressed downlinks) is always ' +
    "the workers' own."
  );
}
