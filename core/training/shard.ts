/** Which training examples a worker of a run trains on: a pure function of the run config and the worker's shard. */
import { shardDirichlet, shardIid, type Shards } from '../data';
import type { DataSplit } from '../protocol';

/** The split of a run that defines its shards. */
export interface ShardSpec {
  readonly split: DataSplit;
  readonly shards: number;
  readonly seed: number;
}

/** The shard a worker in `slot` trains on (slots beyond the shard count wrap around). */
export function shardOfSlot(slot: number, shards: number): number {
  return slot % shards;
}

/**
 * Every shard of a split, per label array and spec: the many workers of one
 * process (a load test's, the server's own) would otherwise each compute the
 * same permutation.
 */
const splits = new WeakMap<Uint8Array, Map<string, Shards>>();

function shardsOf(labels: Uint8Array, spec: ShardSpec): Shards {
  let bySpec = splits.get(labels);
  if (bySpec === undefined) splits.set(labels, (bySpec = new Map()));
  const key = JSON.stringify([spec.split, spec.shards, spec.seed]);
  let all = bySpec.get(key);
  if (all === undefined) {
    all =
      spec.split.kind === 'iid'
        ? shardIid(labels, spec.shards, spec.seed)
        : shardDirichlet(labels, spec.shards, spec.split.alpha, spec.seed);
    bySpec.set(key, all);
  }
  return all;
}

/** The ascending training-set indices of shard `shard` under `spec`. */
export function shardIndices(labels: Uint8Array, spec: ShardSpec, shard: number): Uint32Array {
  const all = shardsOf(labels, spec);
  const indices = all[shard];
  if (indices === undefined) throw new RangeError(`shard ${shard} outside 0..${spec.shards - 1}`);
  return indices;
}
