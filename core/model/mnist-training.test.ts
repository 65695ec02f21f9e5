/**
 * The MLP on real MNIST (public/data/; generated here when absent, as
 * `npm run data` would). 200 steps of batch 32 over the first 6,400 training digits,
 * in the split's fixed order, with lr 0.05 and momentum 0.9, take the
 * held-out loss on the 2,000 test digits from ~2.4 to ~0.35 (accuracy ~90%,
 * measured); the threshold 0.5 leaves room for other seeds, not for bugs.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createBatch, loadMnist } from '../data';
import { createFileReader } from '../../server/data/fileReader';
import { makeData } from '../../scripts/make-data';
import { createCpuBackend } from './cpu/backend';
import { evaluate } from './evaluate';
import { heInitialize } from './init';
import { createModelLayout } from './layout';
import { sgdMomentumStep } from './optimizer';

const STEPS = 200;
const BATCH = 32;
const HELD_OUT = 2000;

describe('MLP on real MNIST', () => {
  beforeAll(async () => {
    await makeData();
  });

  it(`${STEPS} steps of batch ${BATCH} bring the held-out loss below 0.5`, async () => {
    const { train, test } = await loadMnist(createFileReader());
    const layout = createModelLayout('mlp');
    const backend = createCpuBackend(layout);
    const params = heInitialize(layout, 7);
    const velocity = new Float32Array(layout.parameterCount);
    const batch = createBatch(BATCH);
    const indices = new Array<number>(BATCH);

    const before = await evaluate(backend, params, test.images, test.labels, HELD_OUT);
    for (let step = 0; step < STEPS; step++) {
      for (let i = 0; i < BATCH; i++) indices[i] = (step * BATCH + i) % train.count;
      train.batch(indices, batch);
      const { gradient } = await backend.lossAndGradient(params, batch.pixels, batch.labels, BATCH);
      sgdMomentumStep(params, velocity, gradient, 0.05, 0.9);
    }
    const after = await evaluate(backend, params, test.images, test.labels, HELD_OUT);

    expect(before.loss).toBeGreaterThan(1.5);
    expect(after.loss).toBeLessThan(0.5);
    expect(after.accuracy).toBeGreaterThan(0.85);
  });
});
