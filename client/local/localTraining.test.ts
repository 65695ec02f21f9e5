/**
 * Local training on the CPU backend: 200 rounds of the worker round, each
 * estimate applied with SGD + momentum, take the held-out loss of the MLP
 * from ~2.4 to below 0.5 uncompressed (2,000 test digits, measured ~0.35)
 * and below 0.6 with TernGrad (1,000 digits, measured 0.36); the thresholds
 * leave room for other seeds, not for bugs.
 */
import { describe, expect, it } from 'vitest';
import { createCpuBackend } from '../../core/model/cpu/backend';
import { createModelLayout } from '../../core/model/layout';
import { trainLocally } from './localTraining';
import { loadMnistForTests } from './testing';

describe('local training (CPU backend)', () => {
  const cases = [
    // Uncompressed: plain SGD + momentum on the MLP, measured ~0.35 held-out loss and ~90% accuracy.
    { scheme: 'none', heldOut: 2000, maxLoss: 0.5, minAccuracy: 0.85 },
    { scheme: 'terngrad', heldOut: 1000, maxLoss: 0.6, minAccuracy: 0.8 },
  ] as const;
  for (const { scheme, heldOut, maxLoss, minAccuracy } of cases) {
    it(`200 local rounds with ${scheme} bring the held-out loss below ${maxLoss}`, async () => {
      const { train, test } = await loadMnistForTests();
      const layout = createModelLayout('mlp');
      let rounds = 0;
      let bytes = 0;
      const result = await trainLocally({
        backend: createCpuBackend(layout),
        layout,
        compression: { scheme, budget: 2, levels: 1 },
        train,
        test,
        steps: 200,
        batchSize: 32,
        learningRate: 0.05,
        momentum: 0.9,
        seed: 1,
        heldOut,
        onRound: (round) => {
          rounds++;
          bytes += round.bytes;
        },
      });
      expect(result.before.loss).toBeGreaterThan(1.5);
      expect(result.after.loss).toBeLessThan(maxLoss);
      expect(result.after.accuracy).toBeGreaterThan(minAccuracy);
      expect(rounds).toBe(200);
      expect(result.bytes).toBe(bytes);
    });
  }
});
