/**
 * Training smoke tests on synthetic separable digits (testing/synthetic.ts):
 * the CPU backend, He initialisation and SGD with momentum together must
 * drive the held-out loss from ~2.9 (He-initialised logits) to near zero.
 * Thresholds sit well above what a correct pipeline reaches (measured: MLP
 * ~1e-5, CNN ~5e-3, wide MLP ~1e-3 after its 10 steps) and well below what
 * a wrong gradient sign, a missing layer gradient or a broken update could.
 */
import { describe, expect, it } from 'vitest';
import { createCpuBackend } from './cpu/backend';
import { evaluate } from './evaluate';
import { heInitialise } from './init';
import { createModelLayout, INPUT_SIZE, type ModelKind } from './layout';
import { sgdMomentumStep } from './optimiser';
import { syntheticDigits } from './testing/synthetic';

/**
 * Training examples generated; a run cycles through them (synthesising ~7k images would cost more than the training).
 */
const TRAINING_SET_SIZE = 1600;

interface Schedule {
  readonly steps: number;
  readonly batch: number;
  readonly learningRate: number;
  readonly momentum: number;
}

async function trainOnSyntheticDigits(kind: ModelKind, schedule: Schedule) {
  const { steps, batch, learningRate, momentum } = schedule;
  const layout = createModelLayout(kind);
  const backend = createCpuBackend(layout);
  const params = heInitialise(layout, 2024);
  const velocity = new Float32Array(layout.parameterCount);
  const train = syntheticDigits(TRAINING_SET_SIZE, 1, 2);
  const batchesPerPass = Math.floor(TRAINING_SET_SIZE / batch);
  const heldOut = syntheticDigits(500, 1, 3);

  const before = await evaluate(backend, params, heldOut.images, heldOut.labels, 500);
  for (let step = 0; step < steps; step++) {
    const first = (step % batchesPerPass) * batch;
    const images = train.images.subarray(first * INPUT_SIZE, (first + batch) * INPUT_SIZE);
    const labels = train.labels.subarray(first, first + batch);
    const { gradient } = await backend.lossAndGradient(params, images, labels, batch);
    sgdMomentumStep(params, velocity, gradient, learningRate, momentum);
  }
  const after = await evaluate(backend, params, heldOut.images, heldOut.labels, 500);
  return { before, after };
}

describe('training on synthetic digits', () => {
  it('MLP: 200 steps, batch 32, lr 0.1, momentum 0.9 bring the held-out loss below 0.05', async () => {
    const { before, after } = await trainOnSyntheticDigits('mlp', {
      steps: 200,
      batch: 32,
      learningRate: 0.1,
      momentum: 0.9,
    });
    expect(before.loss).toBeGreaterThan(1);
    expect(after.loss).toBeLessThan(0.05);
    expect(after.accuracy).toBeGreaterThanOrEqual(0.98);
  });

  it('CNN: 60 steps, batch 16, lr 0.02, momentum 0.9 bring the held-out loss below 0.1', async () => {
    const { before, after } = await trainOnSyntheticDigits('cnn', {
      steps: 60,
      batch: 16,
      learningRate: 0.02,
      momentum: 0.9,
    });
    expect(before.loss).toBeGreaterThan(1);
    expect(after.loss).toBeLessThan(0.1);
    expect(after.accuracy).toBeGreaterThanOrEqual(0.95);
  });

  it('wide MLP (1.07M parameters): 10 steps, batch 32, lr 0.05, momentum 0.9: held-out loss below 0.05', async () => {
    const { before, after } = await trainOnSyntheticDigits('mlp-wide', {
      steps: 10,
      batch: 32,
      learningRate: 0.05,
      momentum: 0.9,
    });
    expect(before.loss).toBeGreaterThan(1);
    expect(after.loss).toBeLessThan(0.05);
    expect(after.accuracy).toBeGreaterThanOrEqual(0.98);
  });
});
