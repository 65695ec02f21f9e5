import { describe, expect, it } from 'vitest';
import { MinibatchSampler, minibatchIndices } from './minibatch';

/** A shard of 50 scattered dataset indices. */
const shard = Uint32Array.from({ length: 50 }, (_, i) => 3 * i + 1);

describe('MinibatchSampler', () => {
  it('draws only indices of the shard', () => {
    const sampler = new MinibatchSampler(shard, 16, 1, 4);
    const members = new Set(shard);
    for (let round = 0; round < 20; round++) {
      for (const index of sampler.batch(round)) expect(members.has(index)).toBe(true);
    }
  });

  it('is deterministic and independent of call order', () => {
    const forward = new MinibatchSampler(shard, 16, 1, 4);
    const batches = Array.from({ length: 10 }, (_, round) => forward.batch(round));
    const backward = new MinibatchSampler(shard, 16, 1, 4);
    for (let round = 9; round >= 0; round--) expect(backward.batch(round)).toEqual(batches[round]);
    expect(minibatchIndices(shard, 16, 1, 4, 7)).toEqual(batches[7]);
  });

  it('differs across seeds, workers and rounds', () => {
    const base = minibatchIndices(shard, 16, 1, 4, 0);
    expect(minibatchIndices(shard, 16, 2, 4, 0)).not.toEqual(base);
    expect(minibatchIndices(shard, 16, 1, 5, 0)).not.toEqual(base);
    expect(minibatchIndices(shard, 16, 1, 4, 1)).not.toEqual(base);
  });

  it('visits every example exactly once per epoch', () => {
    // Batch 10 divides 50: rounds 0–4 are epoch 0, rounds 5–9 epoch 1.
    const sampler = new MinibatchSampler(shard, 10, 3, 0);
    for (const firstRound of [0, 5]) {
      const seen = new Set<number>();
      for (let round = firstRound; round < firstRound + 5; round++)
        for (const index of sampler.batch(round)) seen.add(index);
      expect(seen.size).toBe(50);
    }
  });

  it('draws without replacement inside a batch that straddles epochs', () => {
    // Batch 16 on 50 examples: round 3 takes positions 48–63, two from epoch 0 and fourteen from epoch 1.
    const batch = new MinibatchSampler(shard, 16, 1, 4).batch(3);
    const epochZeroTail = Array.from(batch.subarray(0, 2));
    const epochOneHead = Array.from(batch.subarray(2));
    expect(new Set(epochOneHead).size).toBe(14);
    expect(new Set(epochZeroTail).size).toBe(2);
  });

  it('spans several epochs when the batch is larger than the shard', () => {
    const tiny = Uint32Array.of(5, 9, 11);
    const batch = new MinibatchSampler(tiny, 7, 1, 0).batch(0);
    expect(batch.length).toBe(7);
    expect(Array.from(batch.subarray(0, 3)).sort((a, b) => a - b)).toEqual([5, 9, 11]);
    expect(Array.from(batch.subarray(3, 6)).sort((a, b) => a - b)).toEqual([5, 9, 11]);
  });

  it('fills a reused output array', () => {
    const sampler = new MinibatchSampler(shard, 8, 1, 0);
    const out = new Uint32Array(8);
    expect(sampler.batch(2, out)).toBe(out);
    expect(out).toEqual(sampler.batch(2));
  });

  it('rejects an empty shard, a bad batch size or round', () => {
    expect(() => new MinibatchSampler(new Uint32Array(0), 8, 1, 3)).toThrow(/worker 3 has an empty shard/);
    expect(() => new MinibatchSampler(shard, 0, 1, 0)).toThrow(/batch size/);
    expect(() => new MinibatchSampler(shard, 8, 1, 0).batch(-1)).toThrow(/round/);
  });
});
