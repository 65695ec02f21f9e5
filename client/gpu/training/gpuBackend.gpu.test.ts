/**
 * The WebGPU backend against the CPU backend (itself checked against the
 * Float64 reference by finite differences) on random weights, for every model,
 * at a batch that is a multiple of the 32-wide matmul tile and at one that is not
 * (the wide MLP at the latter only: its layers reuse the MLP's kernels).
 *
 * Tolerances (float32, stated): loss within 1e-5 relative; logits within
 * 1e-4 of the largest |logit|; every layer's gradient within 1e-4 relative
 * Frobenius error ‖g_gpu − g_cpu‖ / ‖g_cpu‖. Both backends store f32; the CPU
 * sums in float64, the GPU in f32 over sums of ≤ ~20,000 terms, which leaves
 * about 1e-6 relative: the margin is for rare ReLU / max-pool decisions that
 * flip on a near-zero value.
 */
import { describe, expect } from 'vitest';
import { createCpuBackend } from '../../../core/model/cpu/backend';
import { heInitialise } from '../../../core/model/init';
import { createModelLayout, INPUT_SIZE, type ModelKind } from '../../../core/model/layout';
import { sgdMomentumStep } from '../../../core/model/optimiser';
import { syntheticDigits } from '../../../core/model/testing/synthetic';
import { randomImages, randomLabels, randomParameters } from '../../../core/model/testing/fixtures';
import { gpuTest } from '../testing/gpuTest';
import { createGpuBackend } from './gpuBackend';

function relativeError(got: Float32Array, want: Float32Array): number {
  let diff = 0;
  let norm = 0;
  for (let i = 0; i < want.length; i++) {
    diff += (got[i]! - want[i]!) ** 2;
    norm += want[i]! ** 2;
  }
  return Math.sqrt(diff / norm);
}

const cases: [ModelKind, number][] = [
  ['mlp', 32],
  ['mlp', 13],
  ['cnn', 32],
  ['cnn', 7],
  ['mlp-wide', 13],
];

describe('GPU backend vs CPU backend', () => {
  for (const [kind, batch] of cases) {
    gpuTest(`${kind}, batch ${batch}: loss, logits and every layer gradient agree`, async ({ gpu }) => {
      const layout = createModelLayout(kind);
      const params = randomParameters(layout, 11 + batch);
      const images = randomImages(batch, layout.inputSize, 5 + batch);
      const labels = randomLabels(batch, layout.classCount, 3 + batch);
      const cpu = createCpuBackend(layout);
      const gpuBackend = createGpuBackend(gpu.device, layout);
      try {
        const want = await cpu.lossAndGradient(params, images, labels, batch);
        const wantGradient = want.gradient.slice();
        const wantFactors = new Map(
          [...(want.factors ?? [])].map(([t, f]) => [t, { input: f.input.slice(), delta: f.delta.slice() }]),
        );
        const wantLogits = (await cpu.predict(params, images, batch)).slice();
        const got = await gpuBackend.lossAndGradient(params, images, labels, batch);
        const gotLogits = await gpuBackend.predict(params, images, batch);

        expect(Math.abs(got.loss - want.loss) / want.loss).toBeLessThan(1e-5);
        let maxLogit = 0;
        let maxDiff = 0;
        for (let i = 0; i < wantLogits.length; i++) {
          maxLogit = Math.max(maxLogit, Math.abs(wantLogits[i]!));
          maxDiff = Math.max(maxDiff, Math.abs(gotLogits[i]! - wantLogits[i]!));
        }
        expect(maxDiff).toBeLessThan(1e-4 * maxLogit);
        for (const tensor of layout.tensors) {
          const range = [tensor.offset, tensor.offset + tensor.size] as const;
          const error = relativeError(got.gradient.subarray(...range), wantGradient.subarray(...range));
          expect(error, tensor.name).toBeLessThan(1e-4);
        }
        // The dense layers' factors X, Δ come back too, and match the CPU's.
        expect([...(got.factors?.keys() ?? [])].sort()).toEqual([...wantFactors.keys()].sort());
        for (const [tensor, f] of got.factors ?? []) {
          expect(f.batch).toBe(batch);
          expect(
            relativeError(f.input, wantFactors.get(tensor)!.input),
            `${layout.tensors[tensor]!.name} X`,
          ).toBeLessThan(1e-4);
          expect(
            relativeError(f.delta, wantFactors.get(tensor)!.delta),
            `${layout.tensors[tensor]!.name} Δ`,
          ).toBeLessThan(1e-4);
        }
        // A second round on the same buffers gives the same answer (nothing stale, nothing accumulated).
        const again = await gpuBackend.lossAndGradient(params, images, labels, batch);
        expect(relativeError(again.gradient, wantGradient)).toBeLessThan(1e-4);
      } finally {
        gpuBackend.destroy();
      }
    });
  }
});

describe('GPU backend training', () => {
  // Six SGD steps on separable synthetic digits take the loss of a held-out batch from ~2.3 to ~0.04 (the CPU backend,
  // same seeds); 0.3 is far above that and far below what a wrong or missing layer gradient leaves. The held-out loss
  // comes from lossAndGradient at the training batch size, so no other pipelines are built (SwiftShader compiles
  // slowly).
  gpuTest(
    'wide MLP (1.07M parameters): 6 SGD steps bring a held-out batch’s loss from above 2 below 0.3',
    async ({ gpu }) => {
      const layout = createModelLayout('mlp-wide');
      const backend = createGpuBackend(gpu.device, layout);
      const params = heInitialise(layout, 2024);
      const velocity = new Float32Array(layout.parameterCount);
      const batch = 32;
      const train = syntheticDigits(batch * 6, 1, 2);
      const heldOut = syntheticDigits(batch, 1, 3);
      const heldOutLoss = async () =>
        (await backend.lossAndGradient(params, heldOut.images, heldOut.labels, batch)).loss;
      try {
        const before = await heldOutLoss();
        for (let step = 0; step < 6; step++) {
          const first = step * batch;
          const images = train.images.subarray(first * INPUT_SIZE, (first + batch) * INPUT_SIZE);
          const labels = train.labels.subarray(first, first + batch);
          const { gradient } = await backend.lossAndGradient(params, images, labels, batch);
          sgdMomentumStep(params, velocity, gradient, 0.05, 0.9);
        }
        expect(before).toBeGreaterThan(2);
        expect(await heldOutLoss()).toBeLessThan(0.3);
      } finally {
        backend.destroy();
      }
    },
  );
});
