import { describe, expect, it } from 'vitest';
import { createCpuBackend } from './cpu/backend';
import { evaluate } from './evaluate';
import { createModelLayout, INPUT_SIZE } from './layout';
import { referenceLogits } from './reference/network';
import { softmaxCrossEntropyLoss } from './reference/softmax-cross-entropy';
import { randomLabels, randomParameters } from './testing/fixtures';
import { syntheticDigits } from './testing/synthetic';

describe('evaluate', () => {
  const layout = createModelLayout('mlp');
  const backend = createCpuBackend(layout);
  const params = randomParameters(layout, 31);
  const count = 45;
  // Pixel bytes as core/data stores them, and the same pixels as floats.
  const bytes = Uint8Array.from(syntheticDigits(count, 1, 32).images, (value) => Math.round(value * 255));
  const floats = Float32Array.from(bytes, (byte) => byte / 255);
  const labels = randomLabels(count, 10, 33);

  it('equals the reference loss and accuracy', async () => {
    const logits = referenceLogits(layout, Float64Array.from(params), floats, count);
    let correct = 0;
    for (let n = 0; n < count; n++) {
      const row = Array.from(logits.subarray(n * 10, (n + 1) * 10));
      if (row.indexOf(Math.max(...row)) === labels[n]) correct++;
    }
    const result = await evaluate(backend, params, bytes, labels, count);
    expect(result.loss).toBeCloseTo(softmaxCrossEntropyLoss(logits, labels, count, 10), 5);
    expect(result.accuracy).toBe(correct / count);
  });

  it('does not depend on the chunk size or on bytes versus floats', async () => {
    const whole = await evaluate(backend, params, floats, labels, count);
    const chunked = await evaluate(backend, params, bytes, labels, count, { chunkSize: 7 });
    expect(chunked.accuracy).toBe(whole.accuracy);
    expect(chunked.loss).toBeCloseTo(whole.loss, 10);
  });

  it('rejects a count beyond the data', async () => {
    await expect(evaluate(backend, params, bytes, labels, count + 1)).rejects.toThrow(RangeError);
    expect(bytes.length).toBe(count * INPUT_SIZE);
  });
});
