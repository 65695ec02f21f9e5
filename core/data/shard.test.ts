import { describe, expect, it } from 'vitest';
import { CLASS_COUNT } from './dataset';
import { shardDirichlet, shardIid, shardLabelCounts, type Shards } from './shard';

/** 8,000 labels like the training split: balanced classes in a scrambled order. */
const labels = Uint8Array.from({ length: 8000 }, (_, i) => (i * 7 + (i >> 5)) % CLASS_COUNT);

function expectPartition(shards: Shards, total: number): void {
  const all = new Uint32Array(shards.reduce((sum, shard) => sum + shard.length, 0));
  let offset = 0;
  for (const shard of shards) {
    all.set(shard, offset);
    offset += shard.length;
    for (let i = 1; i < shard.length; i++) expect(shard[i]! > shard[i - 1]!).toBe(true);
  }
  all.sort();
  expect(all.length).toBe(total);
  expect(all.every((value, i) => value === i)).toBe(true);
}

/** Mean over workers of the entropy (bits) of the worker's label distribution. */
function meanLabelEntropy(shards: Shards): number {
  let sum = 0;
  for (const shard of shards) {
    const counts = shardLabelCounts(labels, shard);
    let entropy = 0;
    for (const count of counts) {
      if (count > 0) {
        const p = count / shard.length;
        entropy -= p * Math.log2(p);
      }
    }
    sum += entropy;
  }
  return sum / shards.length;
}

describe('shardIid', () => {
  it('is a partition into sizes that differ by at most one', () => {
    const shards = shardIid(labels, 7, 1);
    expectPartition(shards, labels.length);
    expect(shards.map((s) => s.length)).toEqual([1143, 1143, 1143, 1143, 1143, 1143, 1142]);
  });

  it('is deterministic for a seed and different for another', () => {
    expect(shardIid(labels, 10, 42)).toEqual(shardIid(labels, 10, 42));
    expect(shardIid(labels, 10, 43)[0]).not.toEqual(shardIid(labels, 10, 42)[0]);
  });

  it('gives every worker nearly the global label mix', () => {
    expect(meanLabelEntropy(shardIid(labels, 10, 1))).toBeGreaterThan(3.3); // log2(10) ≈ 3.32
  });

  it('handles one worker, and more workers than examples', () => {
    expectPartition(shardIid(labels, 1, 1), labels.length);
    const few = shardIid(labels.subarray(0, 3), 5, 1);
    expectPartition(few, 3);
    expect(few.map((s) => s.length)).toEqual([1, 1, 1, 0, 0]);
  });

  it('rejects a non-positive worker count', () => {
    expect(() => shardIid(labels, 0, 1)).toThrow(/positive integer/);
  });
});

describe('shardDirichlet', () => {
  it('is a partition for small, medium and large alpha', () => {
    for (const alpha of [0.01, 0.1, 1, 1000]) expectPartition(shardDirichlet(labels, 10, alpha, 3), labels.length);
  });

  it('is deterministic for a seed and different for another', () => {
    expect(shardDirichlet(labels, 10, 0.5, 42)).toEqual(shardDirichlet(labels, 10, 0.5, 42));
    expect(shardDirichlet(labels, 10, 0.5, 43)).not.toEqual(shardDirichlet(labels, 10, 0.5, 42));
  });

  it('is label-skewed for alpha = 0.1 and close to IID for alpha = 1000', () => {
    const iid = meanLabelEntropy(shardIid(labels, 10, 5));
    const skewed = meanLabelEntropy(shardDirichlet(labels, 10, 0.1, 5));
    const nearIid = meanLabelEntropy(shardDirichlet(labels, 10, 1000, 5));
    expect(skewed).toBeLessThan(iid / 2);
    expect(nearIid).toBeGreaterThan(iid - 0.05);
  });

  it('gives every worker at least one example when there are enough', () => {
    const shards = shardDirichlet(labels, 200, 0.01, 9);
    expectPartition(shards, labels.length);
    expect(shards.every((shard) => shard.length > 0)).toBe(true);
  });

  it('handles more workers than examples', () => {
    const shards = shardDirichlet(labels.subarray(0, 4), 6, 1, 2);
    expectPartition(shards, 4);
  });

  it('rejects a bad alpha or label', () => {
    expect(() => shardDirichlet(labels, 10, 0, 1)).toThrow(/alpha/);
    expect(() => shardDirichlet(Uint8Array.of(1, 10), 2, 1, 1)).toThrow(/label 10/);
  });
});

describe('shardLabelCounts', () => {
  it('counts the classes of a shard', () => {
    const counts = shardLabelCounts(Uint8Array.of(3, 3, 5, 0), Uint32Array.of(0, 1, 2));
    expect(Array.from(counts)).toEqual([0, 0, 0, 2, 0, 1, 0, 0, 0, 0]);
  });
});
