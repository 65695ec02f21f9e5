import { describe, expect, it } from 'vitest';
import { Dataset, PIXELS_PER_IMAGE, type DatasetName } from '../../core/data';
import { heInitialise } from '../../core/model/init';
import { createModelLayout } from '../../core/model/layout';
import { createCpuModelRuntime } from './cpuModel';

/** `count` examples, every one of class `label`, with pixels that differ per example. */
function oneClass(count: number, label: number): Dataset {
  const images = Uint8Array.from({ length: count * PIXELS_PER_IMAGE }, (_, i) => (i * 7) % 256);
  return new Dataset(images, new Uint8Array(count).fill(label));
}

describe('createCpuModelRuntime', () => {
  const weights = heInitialise(createModelLayout('mlp'), 1);

  it('evaluates a run on its own dataset, loading another test set once, when first asked', async () => {
    const mnist = oneClass(20, 3);
    const fashion = oneClass(30, 3);
    const asked: DatasetName[] = [];
    const runtime = createCpuModelRuntime(mnist, async (dataset) => {
      asked.push(dataset);
      return fashion;
    });
    await runtime.evaluate('mlp', weights);
    expect(asked).toEqual([]);
    const onFashion = await runtime.evaluate('mlp', weights, 'fashion');
    await runtime.evaluate('mlp', weights, 'fashion');
    expect(asked).toEqual(['fashion']);
    // The same weights on all-class-3 images that differ: a test set of other pixels gives another loss.
    expect(onFashion.loss).not.toBe((await runtime.evaluate('mlp', weights, 'mnist')).loss);
  });

  it('lets the event loop turn between the chunks of an evaluation, so sockets keep answering', async () => {
    const runtime = createCpuModelRuntime(oneClass(2000, 4));
    let turns = 0;
    let evaluating = true;
    const tick = () => {
      if (!evaluating) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    await runtime.evaluate('mlp', weights);
    evaluating = false;
    // 2,000 images are 4 chunks of evaluate()'s 500; run through without a yield, no turn would come in between.
    expect(turns).toBeGreaterThanOrEqual(3);
  });

  it('evaluates a prefix of the test split when asked for fewer examples, all of it when asked for more', async () => {
    // Half the examples of one class and half of another: the first half alone scores differently from the whole.
    const images = Uint8Array.from({ length: 40 * PIXELS_PER_IMAGE }, (_, i) => (i * 7) % 256);
    const labels = Uint8Array.from({ length: 40 }, (_, n) => (n < 20 ? 3 : 5));
    const runtime = createCpuModelRuntime(new Dataset(images, labels));
    const prefix = createCpuModelRuntime(
      new Dataset(images.subarray(0, 20 * PIXELS_PER_IMAGE), labels.subarray(0, 20)),
    );
    const whole = await runtime.evaluate('mlp', weights);
    expect(await runtime.evaluate('mlp', weights, 'mnist', 20)).toEqual(await prefix.evaluate('mlp', weights));
    expect(await runtime.evaluate('mlp', weights, 'mnist', 20)).not.toEqual(whole);
    expect(await runtime.evaluate('mlp', weights, 'mnist', 1000)).toEqual(whole);
  });

  it('fails an evaluation on a dataset it cannot load, naming it, and tries the load again next time', async () => {
    expect.assertions(3);
    const runtime = createCpuModelRuntime(oneClass(10, 0));
    await expect(runtime.evaluate('mlp', weights, 'fashion')).rejects.toThrow(/no Fashion-MNIST test set/);
    let attempts = 0;
    const retrying = createCpuModelRuntime(oneClass(10, 0), async () => {
      attempts++;
      if (attempts === 1) throw new Error('fashion.json not found (generate it with `npm run data`)');
      return oneClass(10, 1);
    });
    await expect(retrying.evaluate('mlp', weights, 'fashion')).rejects.toThrow(/npm run data/);
    await retrying.evaluate('mlp', weights, 'fashion');
    expect(attempts).toBe(2);
  });
});
