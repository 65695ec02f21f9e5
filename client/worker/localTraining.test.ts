/**
 * Local training on the CPU backend: 200 rounds of the worker round with
 * TernGrad, each estimate applied with SGD + momentum, take the held-out loss
 * of the MLP on 1,000 test digits from ~2.4 to below 0.6 (measured 0.36 with
 * these settings; the threshold leaves room for other seeds, not for bugs).
 */
import { describe, expect, it } from 'vitest';
import { createCpuBackend } from '../../core/model/cpu/backend';
import { createModelLayout } from '../../core/model/layout';
import { trainLocally } from './localTraining';
import { loadMnistForTests } from './testing';

describe('local training (CPU backend)', () => {
  it('200 local rounds with TernGrad bring the held-out loss below 0.6', async () => {
    const { train, test } = await loadMnistForTests();
    const layout = createModelLayout('mlp');
    let rounds = 0;
    let bytes = 0;
    const result = await trainLocally({
      backend: createCpuBackend(layout),
      layout,
      compression: { scheme: 'terngrad', budget: 2, levels: 1 },
      train,
      test,
      steps: 200,
      batchSize: 32,
      learningRate: 0.05,
      momentum: 0.9,
      seed: 1,
      heldOut: 1000,
      onRound: (round) => {
        rounds++;
        bytes += round.bytes;
      },
    });
    expect(result.before.loss).toBeGreaterThan(1.5);
    expect(result.after.loss).toBeLessThan(0.6);
    expect(rounds).toBe(200);
    expect(result.bytes).toBe(bytes);
  });
});
