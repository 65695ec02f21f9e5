/**
 * A synthetic stand-in for MNIST that a model can learn in a few hundred
 * steps: each class has a random "ink" mask covering ~20% of the pixels;
 * an example is its class's mask at random intensities, with ~5% of the
 * background pixels switched on as noise. Classes are linearly separable
 * with a wide margin, so a correct model and optimiser drive the loss
 * towards zero and a broken one cannot.
 */
import { CLASS_COUNT, INPUT_SIZE } from '../layout';
import { fixtureUniform } from './fixtures';

const INK_FRACTION = 0.2;
const NOISE_FRACTION = 0.05;
/** Purposes (StreamId.worker) of the fixture streams used here, distinct from fixtures.ts's. */
const PROTOTYPE_PURPOSE = 20;
const EXAMPLE_PURPOSE = 21;

/** Labelled examples like a core/data Batch: images count·784 in [0, 1], labels 0–9. */
export interface SyntheticDigits {
  readonly images: Float32Array;
  readonly labels: Uint8Array;
}

/** `count` examples; the class masks depend only on `taskSeed`, the examples on `sampleSeed`. */
export function syntheticDigits(count: number, taskSeed: number, sampleSeed: number): SyntheticDigits {
  const ink = Uint8Array.from({ length: CLASS_COUNT * INPUT_SIZE }, (_, i) =>
    fixtureUniform(taskSeed, PROTOTYPE_PURPOSE, i) < INK_FRACTION ? 1 : 0,
  );
  const images = new Float32Array(count * INPUT_SIZE);
  const labels = new Uint8Array(count);
  let draw = 0;
  const next = (): number => fixtureUniform(sampleSeed, EXAMPLE_PURPOSE, draw++);
  for (let n = 0; n < count; n++) {
    const label = Math.floor(next() * CLASS_COUNT);
    labels[n] = label;
    for (let p = 0; p < INPUT_SIZE; p++) {
      const on = ink[label * INPUT_SIZE + p] === 1 || next() < NOISE_FRACTION;
      images[n * INPUT_SIZE + p] = on ? 0.5 + 0.5 * next() : 0;
    }
  }
  return { images, labels };
}
