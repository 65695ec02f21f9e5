/** Test helper: a small synthetic MNIST file pair (not exported from index.ts). */
import { PIXELS_PER_IMAGE } from './dataset';
import { packMnist, type PackedMnist } from './pack';

/** `total` examples with a recognisable pattern: example i has label i % 10 and pixels (i + p) % 256. */
export function syntheticMnist(total: number, trainCount: number): PackedMnist {
  const images = new Uint8Array(total * PIXELS_PER_IMAGE);
  for (let i = 0; i < total; i++) {
    for (let p = 0; p < PIXELS_PER_IMAGE; p++) images[i * PIXELS_PER_IMAGE + p] = (i + p) % 256;
  }
  const labels = Uint8Array.from({ length: total }, (_, i) => i % 10);
  return packMnist({ images, labels, trainCount, source: { package: 'synthetic', splitSeed: 1, splitMethod: 'none' } });
}
