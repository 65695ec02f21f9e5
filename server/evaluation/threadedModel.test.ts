import { afterAll, describe, expect, it } from 'vitest';
import { loadMnist } from '../../core/data';
import { heInitialise } from '../../core/model/init';
import { createModelLayout } from '../../core/model/layout';
import { createFileReader } from '../data/fileReader';
import { createCpuModelRuntime } from '../model/cpuModel';
import { loadTestSet } from '../data/testSets';
import { createThreadedModelRuntime } from './threadedModel';

const { test } = await loadMnist(createFileReader());
const cpu = createCpuModelRuntime(test, (dataset) => loadTestSet(dataset));
// Three threads, so the shares are unequal (2,000 = 666 + 667 + 667) and a share boundary falls inside a chunk.
const threaded = createThreadedModelRuntime(test, { threads: 3 });
afterAll(() => threaded.close());

describe('createThreadedModelRuntime', () => {
  const weights = heInitialise(createModelLayout('mlp'), 7);

  // The same examples through the same kernels: the accuracies are equal counts, and the losses differ only in the
  // order of the sum (float64 sums of 2,000 terms of about 2.3: far below 1e-12 relative).
  it('evaluates as the CPU runtime does, on the whole split and on a prefix of it', async () => {
    for (const examples of [undefined, 1000, 5]) {
      const want = await cpu.evaluate('mlp', weights, 'mnist', examples);
      const got = await threaded.evaluate('mlp', weights, 'mnist', examples);
      expect(got.accuracy).toBe(want.accuracy);
      expect(got.loss).toBeCloseTo(want.loss, 12);
    }
  });

  it('evaluates another dataset and another model, read by the threads themselves', async () => {
    const cnn = heInitialise(createModelLayout('cnn'), 3);
    const want = await cpu.evaluate('cnn', cnn, 'fashion', 300);
    const got = await threaded.evaluate('cnn', cnn, 'fashion', 300);
    expect(got.accuracy).toBe(want.accuracy);
    expect(got.loss).toBeCloseTo(want.loss, 12);
  });

  it('fails an evaluation whose data the threads cannot read, naming `npm run data`, and goes on', async () => {
    const nowhere = createThreadedModelRuntime(test, { threads: 2, directory: '/nonexistent-atomo-data' });
    try {
      await expect(nowhere.evaluate('mlp', weights, 'fashion')).rejects.toThrow(/npm run data/);
      await expect(nowhere.evaluate('mlp', weights, 'fashion')).rejects.toThrow(/npm run data/);
    } finally {
      await nowhere.close();
    }
    expect((await threaded.evaluate('mlp', weights)).accuracy).toBeGreaterThan(0);
  });
});
