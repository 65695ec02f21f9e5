/** One split of MNIST in memory, and minibatches from it as the model consumes them. */

/** Image height in pixels. */
export const IMAGE_ROWS = 28;
/** Image width in pixels. */
export const IMAGE_COLS = 28;
/** Pixels per image (28·28 = 784), the model's input width. */
export const PIXELS_PER_IMAGE = IMAGE_ROWS * IMAGE_COLS;
/** Number of classes (digits 0–9). */
export const CLASS_COUNT = 10;

/** A minibatch ready for the model: row-major pixels in [0, 1] and labels. */
export interface Batch {
  /** size·784 floats, image after image, each pixel byte / 255. */
  readonly pixels: Float32Array;
  /** size labels, 0–9. */
  readonly labels: Uint8Array;
}

/** Pixel byte → float, as a table: exactly byte / 255 rounded to f32, without a division per pixel. */
const PIXEL_TO_FLOAT: Float32Array = (() => {
  const table = new Float32Array(256);
  for (let byte = 0; byte < 256; byte++) table[byte] = byte / 255;
  return table;
})();

/** Allocates a Batch of `capacity` examples, to be refilled by Dataset.batch every step. */
export function createBatch(capacity: number): Batch {
  return { pixels: new Float32Array(capacity * PIXELS_PER_IMAGE), labels: new Uint8Array(capacity) };
}

/** A set of labelled 28×28 images stored as bytes (views into the loaded binary, not copies). */
export class Dataset {
  /** count·784 pixel bytes, round(v·255), image-major then row-major. */
  readonly images: Uint8Array;
  /** count labels, 0–9. */
  readonly labels: Uint8Array;
  /** Number of examples. */
  readonly count: number;

  constructor(images: Uint8Array, labels: Uint8Array) {
    if (images.length !== labels.length * PIXELS_PER_IMAGE) {
      throw new RangeError(
        `Dataset: ${images.length} pixel bytes do not hold ${labels.length} images of ${PIXELS_PER_IMAGE}`,
      );
    }
    this.images = images;
    this.labels = labels;
    this.count = labels.length;
  }

  /** The 784 pixel bytes of example `index` (a view, no copy). */
  image(index: number): Uint8Array {
    this.#checkIndex(index);
    return this.images.subarray(index * PIXELS_PER_IMAGE, (index + 1) * PIXELS_PER_IMAGE);
  }

  /**
   * The examples at `indices` as floats in [0, 1] plus labels, written into
   * the first indices.length rows of `out` (reuse one Batch per step to avoid
   * allocating), or into a new Batch of exactly that size.
   */
  batch(indices: ArrayLike<number>, out: Batch = createBatch(indices.length)): Batch {
    if (out.labels.length < indices.length || out.pixels.length < indices.length * PIXELS_PER_IMAGE) {
      throw new RangeError(`Dataset.batch: output holds ${out.labels.length} examples, ${indices.length} requested`);
    }
    for (let row = 0; row < indices.length; row++) {
      const index = indices[row]!;
      this.#checkIndex(index);
      const source = index * PIXELS_PER_IMAGE;
      const target = row * PIXELS_PER_IMAGE;
      for (let p = 0; p < PIXELS_PER_IMAGE; p++) {
        out.pixels[target + p] = PIXEL_TO_FLOAT[this.images[source + p]!]!;
      }
      out.labels[row] = this.labels[index]!;
    }
    return out;
  }

  #checkIndex(index: number): void {
    if (!Number.isInteger(index) || index < 0 || index >= this.count) {
      throw new RangeError(`Dataset: example index ${index} outside 0..${this.count - 1}`);
    }
  }
}
