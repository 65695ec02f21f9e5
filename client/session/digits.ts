/** The few digits of a worker's shard that its page shows with the model's predictions. */
import type { Dataset } from '../../core/data';
import { createBatch } from '../../core/data';

/** How many digits the page shows. */
export const SHOWN_DIGITS = 8;

/** The shown digits as bytes (for drawing) and as a float batch (for the model). */
export interface DigitSample {
  readonly pixels: readonly Uint8Array[];
  readonly labels: Uint8Array;
  /** count·784 floats in [0, 1]. */
  readonly images: Float32Array;
  readonly count: number;
}

/** Spreads SHOWN_DIGITS picks evenly over the shard, so they are not all the same class on a sorted shard. */
export function sampleDigits(train: Dataset, shard: Uint32Array): DigitSample {
  const count = Math.min(SHOWN_DIGITS, shard.length);
  const indices = Array.from({ length: count }, (_, i) => shard[Math.floor((i * shard.length) / count)]!);
  const batch = train.batch(indices, createBatch(count));
  // Copies, not views: the pixels travel to the page by postMessage, which would copy a view's whole buffer (every
  // digit of the set).
  return { pixels: indices.map((i) => train.image(i).slice()), labels: batch.labels, images: batch.pixels, count };
}
