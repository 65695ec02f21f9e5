/**
 * Sequential random draws for the data pipeline, built on the project's
 * Philox streams (core/rng). Each draw is randomBits(stream, k) for k = 0, 1,
 * 2, …, so a sequence is fully determined by its StreamId and any draw can be
 * recomputed from its position.
 */
import { randomBits, type StreamId } from '../rng';

/**
 * Purpose tags for StreamId.layer. Gradient sampling uses small layer indices;
 * these large constants keep data draws on streams of their own, so a data
 * seed equal to a run seed never replays the Bernoulli draws of a layer.
 */
export const DataStreamTag = {
  /** make-data's fixed train/test split permutation. */
  split: 0xda7a0001,
  /** shardIid's permutation of the training set. */
  shardIid: 0xda7a0002,
  /** shardDirichlet: per-class proportions and per-class shuffle (worker = class). */
  shardDirichlet: 0xda7a0003,
  /** Minibatch sampler: one permutation of a shard per epoch (round = epoch). */
  minibatch: 0xda7a0004,
} as const;

const TWO_POW_26 = 0x4000000;
const TWO_POW_53 = 0x20000000000000;
/** The last counter value of a stream: counter word 0 is 32 bits. */
const LAST_INDEX = 0xffffffff;

/** A cursor over one Philox stream, handing out bits, uniforms, integers and normals. */
export class DrawSequence {
  readonly #stream: StreamId;
  #nextIndex = 0;

  constructor(stream: StreamId) {
    this.#stream = stream;
  }

  /** How many 32-bit words have been consumed so far. */
  get position(): number {
    return this.#nextIndex;
  }

  /** The next 32 random bits. */
  nextBits(): number {
    if (this.#nextIndex > LAST_INDEX) throw new RangeError('DrawSequence exhausted its 2^32 counters');
    return randomBits(this.#stream, this.#nextIndex++);
  }

  /**
   * A uniform double in [0, 1) with 53 bits of resolution (two words). The
   * 24-bit uniform of core/rng is enough for Bernoulli thresholds but too
   * coarse for logarithms in the Gamma sampler.
   */
  nextUniform(): number {
    const high = this.nextBits() >>> 5; // 27 bits
    const low = this.nextBits() >>> 6; // 26 bits
    return (high * TWO_POW_26 + low) / TWO_POW_53;
  }

  /** A uniform double in (0, 1]: safe to take the logarithm of. */
  nextUniformPositive(): number {
    return 1 - this.nextUniform();
  }

  /**
   * An integer uniform in [0, bound). Scaling a 53-bit uniform is biased by
   * at most bound / 2^53, far below anything measurable at dataset sizes.
   */
  nextInt(bound: number): number {
    return Math.floor(this.nextUniform() * bound);
  }

  /** A standard normal draw by Box–Muller (one of the pair; the other is discarded for simplicity). */
  nextNormal(): number {
    const radius = Math.sqrt(-2 * Math.log(this.nextUniformPositive()));
    const angle = 2 * Math.PI * this.nextUniform();
    return radius * Math.cos(angle);
  }
}
