/** Held-out evaluation: mean cross-entropy and accuracy over a dataset, in chunks through any backend. */
import type { TrainingBackend } from './backend';
import { CLASS_COUNT, INPUT_SIZE } from './layout';

/** Mean loss and the fraction classified correctly. */
export interface Evaluation {
  readonly loss: number;
  readonly accuracy: number;
}

/** Options of evaluate(). */
export interface EvaluateOptions {
  /** Examples per predict() call; big enough to amortise the call, small enough to keep workspaces modest. */
  readonly chunkSize?: number;
}

const DEFAULT_CHUNK_SIZE = 500;

/**
 * Evaluates the first `count` examples. Images are either pixel bytes
 * (0–255, as core/data's Dataset stores them) or floats already in [0, 1];
 * bytes are converted one chunk at a time.
 */
export async function evaluate(
  backend: TrainingBackend,
  params: Float32Array,
  images: Uint8Array | Float32Array,
  labels: Uint8Array,
  count: number,
  options: EvaluateOptions = {},
): Promise<Evaluation> {
  if (!Number.isInteger(count) || count < 1)
    throw new RangeError(`evaluate: count must be a positive integer, got ${count}`);
  if (images.length < count * INPUT_SIZE || labels.length < count)
    throw new RangeError(`evaluate: the dataset holds fewer than ${count} examples`);
  const chunkSize = Math.min(options.chunkSize ?? DEFAULT_CHUNK_SIZE, count);
  const chunkPixels = images instanceof Uint8Array ? new Float32Array(chunkSize * INPUT_SIZE) : null;

  let totalLoss = 0;
  let correct = 0;
  for (let start = 0; start < count; start += chunkSize) {
    const size = Math.min(chunkSize, count - start);
    const pixels =
      images instanceof Uint8Array
        ? bytesToUnit(images, start, size, chunkPixels!)
        : images.subarray(start * INPUT_SIZE, (start + size) * INPUT_SIZE);
    const logits = await backend.predict(params, pixels, size);
    for (let n = 0; n < size; n++) {
      const label = labels[start + n]!;
      const row = n * CLASS_COUNT;
      let max = -Infinity;
      let predicted = 0;
      for (let k = 0; k < CLASS_COUNT; k++) {
        const z = logits[row + k]!;
        if (z > max) {
          max = z;
          predicted = k;
        }
      }
      let sum = 0;
      for (let k = 0; k < CLASS_COUNT; k++) sum += Math.exp(logits[row + k]! - max);
      totalLoss += max + Math.log(sum) - logits[row + label]!;
      if (predicted === label) correct++;
    }
  }
  return { loss: totalLoss / count, accuracy: correct / count };
}

/** byte → byte/255 as float32, the same values core/data's Dataset.batch produces. */
const UNIT_OF_BYTE = Float32Array.from({ length: 256 }, (_, byte) => byte / 255);

/** Pixels of examples [start, start + size) as floats byte/255, written into `out`. */
function bytesToUnit(bytes: Uint8Array, start: number, size: number, out: Float32Array): Float32Array {
  const first = start * INPUT_SIZE;
  const length = size * INPUT_SIZE;
  for (let i = 0; i < length; i++) out[i] = UNIT_OF_BYTE[bytes[first + i]!]!;
  return length === out.length ? out : out.subarray(0, length);
}
