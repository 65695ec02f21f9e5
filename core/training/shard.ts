/** Which training examples a worker of a run trains on: a pure function of the run config and the worker's shard. */
import { shardDirichlet, shardIid } from '../data';
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

/** The ascending training-set indices of shard `shard` under `spec`. */
export function shardIndices(labels: Uint8Array, spec: ShardSpec, shard: number): Uint32Array {
  const all =
    spec.split.kind === 'iid'
      ? shardIid(labels, spec.shards, spec.seed)
      : shardDirichlet(labels, spec.shards, spec.split.alpha, spec.seed);
  const indices = all[shard];
  if (indices === undefined) throw new RangeError(`shard ${shard} outside 0..${spec.shards - 1}`);
  return indices;
}
