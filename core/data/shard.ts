/**
 * Splitting the training set across workers. Each function returns, per
 * worker, the ascending indices of its examples; together they are a
 * partition of 0..labels.length−1 (every example on exactly one worker), and
 * the same seed gives the same shards on every machine.
 */
import { CLASS_COUNT } from './dataset';
import { sampleSymmetricDirichlet } from './gamma';
import { randomPermutation, shuffleInPlace } from './permutation';
import { DataStreamTag, DrawSequence } from './random';

/** Example indices of each worker, indexed by worker id. */
export type Shards = Uint32Array[];

/**
 * IID shards: a seeded permutation of all examples cut into `workers` runs
 * whose sizes differ by at most one, so each worker sees every class in about
 * the global proportion.
 */
export function shardIid(labels: Uint8Array, workers: number, seed: number): Shards {
  checkWorkers(workers);
  const order = randomPermutation(
    labels.length,
    new DrawSequence({ seed, worker: 0, round: 0, layer: DataStreamTag.shardIid }),
  );
  const base = Math.floor(labels.length / workers);
  const withExtra = labels.length % workers;
  const shards: Shards = [];
  let start = 0;
  for (let worker = 0; worker < workers; worker++) {
    const size = base + (worker < withExtra ? 1 : 0);
    shards.push(order.slice(start, start + size).sort());
    start += size;
  }
  return shards;
}

/**
 * Label-skewed shards (Hsu, Qi & Brown 2019): for each class c, proportions
 * q_c ~ Dirichlet(α, …, α) over workers, and the class's examples (shuffled)
 * are dealt out in those proportions. Small α gives each worker few classes;
 * α → ∞ approaches IID. Then, while some worker is empty and there are at
 * least as many examples as workers, the largest shard gives its last
 * example to the empty one, so every worker can train.
 * Draws for class c come from stream (seed, worker = c, layer = shardDirichlet).
 */
export function shardDirichlet(labels: Uint8Array, workers: number, alpha: number, seed: number): Shards {
  checkWorkers(workers);
  if (!(alpha > 0) || !Number.isFinite(alpha))
    throw new RangeError(`shardDirichlet: alpha must be finite and > 0, got ${alpha}`);

  const members: number[][] = [];
  for (let c = 0; c < CLASS_COUNT; c++) members.push([]);
  labels.forEach((label, index) => {
    if (label >= CLASS_COUNT) throw new RangeError(`shardDirichlet: label ${label} at ${index} is not a digit`);
    members[label]!.push(index);
  });

  const assigned: number[][] = Array.from({ length: workers }, () => []);
  members.forEach((classMembers, c) => {
    const draws = new DrawSequence({ seed, worker: c, round: 0, layer: DataStreamTag.shardDirichlet });
    const proportions = sampleSymmetricDirichlet(workers, alpha, draws);
    const shuffled = Uint32Array.from(classMembers);
    shuffleInPlace(shuffled, draws);
    // Cut points at the rounded cumulative proportions: sizes sum exactly to the class size.
    let cumulative = 0;
    let start = 0;
    for (let worker = 0; worker < workers; worker++) {
      cumulative += proportions[worker]!;
      const end =
        worker === workers - 1 ? shuffled.length : Math.min(shuffled.length, Math.round(cumulative * shuffled.length));
      for (let k = start; k < end; k++) assigned[worker]!.push(shuffled[k]!);
      start = Math.max(start, end);
    }
  });

  fillEmptyWorkers(assigned, labels.length);
  return assigned.map((indices) => Uint32Array.from(indices).sort());
}

/** How many examples of each class a shard holds (for skew statistics and the dashboard). */
export function shardLabelCounts(labels: Uint8Array, shard: Uint32Array): Uint32Array {
  const counts = new Uint32Array(CLASS_COUNT);
  for (const index of shard) {
    const label = labels[index];
    if (label === undefined || label >= CLASS_COUNT)
      throw new RangeError(`shardLabelCounts: index ${index} has no digit label`);
    counts[label]!++;
  }
  return counts;
}

/** Moves one example from the currently largest worker to each empty worker (lowest id wins ties). */
function fillEmptyWorkers(assigned: number[][], total: number): void {
  if (total < assigned.length) return;
  for (const receiver of assigned) {
    if (receiver.length > 0) continue;
    let donor = assigned[0]!;
    for (const candidate of assigned) {
      if (candidate.length > donor.length) donor = candidate;
    }
    receiver.push(donor.pop()!);
  }
}

function checkWorkers(workers: number): void {
  if (!Number.isInteger(workers) || workers < 1)
    throw new RangeError(`workers must be a positive integer, got ${workers}`);
}
