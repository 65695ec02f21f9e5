/**
 * Minibatches of one worker, sampled without replacement within epochs.
 *
 * Round r of a worker with shard S (n examples) and batch size B takes
 * positions q = r·B, …, r·B + B − 1 of an endless stream made of epochs:
 * epoch e = ⌊q / n⌋ is a fresh permutation π_e of S, drawn from stream
 * (seed, worker, round = e, layer = minibatch), and position q picks
 * S[π_e(q mod n)]. So every example is seen once per epoch, a batch may
 * straddle two epochs, B > n simply spans several, and any round can be
 * recomputed on its own (a reconnecting tab, or the server auditing a worker).
 */
import { randomPermutation } from './permutation';
import { DataStreamTag, DrawSequence } from './random';

/** Draws the batches of one worker for any round; caches the last two epoch permutations. */
export class MinibatchSampler {
  readonly #shard: Uint32Array;
  readonly #batchSize: number;
  readonly #seed: number;
  readonly #worker: number;
  /** Two slots suffice: consecutive rounds touch at most the current and the next epoch. */
  readonly #epochCache = new Map<number, Uint32Array>();

  constructor(shard: Uint32Array, batchSize: number, seed: number, worker: number) {
    if (shard.length === 0) throw new RangeError(`MinibatchSampler: worker ${worker} has an empty shard`);
    if (!Number.isInteger(batchSize) || batchSize < 1)
      throw new RangeError(`MinibatchSampler: batch size must be a positive integer, got ${batchSize}`);
    this.#shard = shard;
    this.#batchSize = batchSize;
    this.#seed = seed;
    this.#worker = worker;
  }

  /** Examples per batch. */
  get batchSize(): number {
    return this.#batchSize;
  }

  /** The dataset indices of round `round`'s batch, written into `out` (reusable) or a new array. */
  batch(round: number, out: Uint32Array = new Uint32Array(this.#batchSize)): Uint32Array {
    if (!Number.isSafeInteger(round) || round < 0)
      throw new RangeError(`MinibatchSampler: round must be a non-negative integer, got ${round}`);
    if (out.length < this.#batchSize)
      throw new RangeError(`MinibatchSampler: output holds ${out.length}, batch size is ${this.#batchSize}`);
    const n = this.#shard.length;
    for (let j = 0; j < this.#batchSize; j++) {
      const position = round * this.#batchSize + j;
      const epoch = Math.floor(position / n);
      out[j] = this.#shard[this.#permutation(epoch)[position - epoch * n]!]!;
    }
    return out;
  }

  #permutation(epoch: number): Uint32Array {
    const cached = this.#epochCache.get(epoch);
    if (cached) return cached;
    const stream = { seed: this.#seed, worker: this.#worker, round: epoch, layer: DataStreamTag.minibatch };
    const order = randomPermutation(this.#shard.length, new DrawSequence(stream));
    if (this.#epochCache.size >= 2) this.#epochCache.delete(this.#epochCache.keys().next().value!);
    this.#epochCache.set(epoch, order);
    return order;
  }
}

/** One batch without keeping a sampler (recomputes the epoch permutation; prefer MinibatchSampler in a loop). */
export function minibatchIndices(
  shard: Uint32Array,
  batchSize: number,
  seed: number,
  worker: number,
  round: number,
): Uint32Array {
  return new MinibatchSampler(shard, batchSize, seed, worker).batch(round);
}
