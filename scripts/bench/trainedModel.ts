/**
 * A trained model's minibatches for the compress bench: the default run's MLP
 * trained deterministically by one worker, the way the server steps it, so the
 * bench can time compression on the gradients a tab sends after the first
 * rounds (docs/design.md, "The CPU step's speed": there dense1's
 * factored core is graded and its Jacobi takes more sweeps than at
 * He-initialised weights).
 *
 * Each round is the project's own: core/training/workerRound.ts on the CPU
 * backend (the default run's scheme, budget, batch and seed; shard 0 of its
 * split), then the server's update of one contribution (decode, the run's
 * aggregation rule, SGD with the run's learning rate and momentum,
 * core/training/modelUpdate.ts).
 */
import { type Batch, type Dataset, MinibatchSampler } from '../../core/data';
import { createCpuBackend } from '../../core/model/cpu/backend';
import { heInitialise } from '../../core/model/init';
import type { ModelLayout } from '../../core/model/layout';
import { DEFAULT_RUN_CONFIG } from '../../core/schema/runConfig';
import {
  aggregateContributions,
  decodeContribution,
  flattenContribution,
  type ModelState,
  stepModel,
} from '../../core/training/modelUpdate';
import { shardIndices } from '../../core/training/shard';
import { createWorkerRound } from '../../core/training/workerRound';

const RUN = DEFAULT_RUN_CONFIG;

/** The model of round `version` and that round's minibatch. */
export interface TrainedRound {
  readonly version: number;
  readonly weights: Float32Array;
  readonly batch: Batch;
}

/**
 * Trains `layout` (the default run's MLP) for `rounds` rounds from its He initialisation, then returns the models and
 * minibatches of the next `count` rounds (training on through them), and the seconds the training took.
 */
export async function trainedRounds(
  layout: ModelLayout,
  train: Dataset,
  rounds: number,
  count: number,
): Promise<{ rounds: TrainedRound[]; seconds: number }> {
  const started = performance.now();
  const shard = shardIndices(train.labels, { split: RUN.split, shards: RUN.shards, seed: RUN.seed }, 0);
  const worker = 0;
  const round = createWorkerRound({
    backend: createCpuBackend(layout),
    layout,
    compression: { scheme: RUN.scheme, budget: RUN.budget, levels: RUN.levels },
    batchSize: RUN.batchSize,
    seed: RUN.seed,
    worker,
    train,
    shard,
  });
  // The worker's own sampler: round v's minibatch is sampler.batch(v), as in createWorkerRound.
  const sampler = new MinibatchSampler(shard, RUN.batchSize, RUN.seed, worker);
  let state: ModelState = { params: heInitialise(layout, RUN.seed), velocity: new Float32Array(layout.parameterCount) };
  const kept: TrainedRound[] = [];
  for (let version = 0; version < rounds + count; version++) {
    if (version >= rounds)
      kept.push({ version, weights: state.params.slice(), batch: train.batch(sampler.batch(version)) });
    const { layers } = await round(state.params, version);
    const update = aggregateContributions(layout, RUN.aggregation, [
      flattenContribution(layout, decodeContribution(layout, layers)),
    ]);
    state = stepModel(state, update.value, RUN.learningRate, RUN.momentum);
  }
  return { rounds: kept, seconds: (performance.now() - started) / 1000 };
}
