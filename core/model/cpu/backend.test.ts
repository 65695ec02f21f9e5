/**
 * The float32 CPU backend against the Float64 reference on random weights.
 *
 * Tolerance: the backend stores every intermediate in float32 (unit roundoff
 * u = 2⁻²⁴ ≈ 6e-8) but does its arithmetic in double, so errors come from
 * rounding each stored value, not from long float32 sums. Each tensor's
 * gradient must satisfy
 *   ‖g_cpu − g_ref‖₂ ≤ 1e-5 · ‖g_ref‖₂   and   max |g_cpu − g_ref| ≤ 1e-5 · max |g_ref|,
 * logits max |z_cpu − z_ref| ≤ 1e-5 · max(1, max |z_ref|), and the loss
 * |L_cpu − L_ref| ≤ 1e-6 · L_ref: a few hundred u, far below anything
 * training notices and far above the ≤ 6u (3e-7) measured, so an
 * indexing bug (errors of order 1) cannot hide in it.
 */
import { describe, expect, it } from 'vitest';
import { SMALL_CNN } from '../../atomo/testing/gradients';
import { cnnLayout, createModelLayout, findTensor, tensorView, MODEL_KINDS } from '../layout';
import { referenceLossAndGradient } from '../reference/network';
import { randomImages, randomLabels, randomParameters } from '../testing/fixtures';
import { createCpuBackend } from './backend';

const GRADIENT_TOLERANCE = 1e-5;
const LOGIT_TOLERANCE = 1e-5;
const LOSS_TOLERANCE = 1e-6;

function norm(values: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i]! ** 2;
  return Math.sqrt(sum);
}

function maxAbs(values: ArrayLike<number>): number {
  let max = 0;
  for (let i = 0; i < values.length; i++) max = Math.max(max, Math.abs(values[i]!));
  return max;
}

function difference(a: ArrayLike<number>, b: ArrayLike<number>): Float64Array {
  return Float64Array.from({ length: a.length }, (_, i) => a[i]! - b[i]!);
}

describe.each(MODEL_KINDS)('CPU backend (%s) matches the Float64 reference', (kind) => {
  const layout = createModelLayout(kind);
  const backend = createCpuBackend(layout);

  it.each([1, 3, 32])('batch %i: loss, logits and every tensor gradient', async (batch) => {
    const seed = 100 + batch;
    const params = randomParameters(layout, seed);
    const images = randomImages(batch, layout.inputSize, seed + 1);
    const labels = randomLabels(batch, layout.classCount, seed + 2);
    const reference = referenceLossAndGradient(layout, Float64Array.from(params), images, labels, batch);

    const logits = Float32Array.from(await backend.predict(params, images, batch));
    const { loss, gradient } = await backend.lossAndGradient(params, images, labels, batch);

    expect(Math.abs(loss - reference.loss)).toBeLessThanOrEqual(LOSS_TOLERANCE * reference.loss);
    expect(maxAbs(difference(logits, reference.logits))).toBeLessThanOrEqual(
      LOGIT_TOLERANCE * Math.max(1, maxAbs(reference.logits)),
    );
    for (const tensor of layout.tensors) {
      const expected = tensorView(reference.gradient, tensor);
      const error = difference(tensorView(gradient, tensor), expected);
      expect(norm(error), `${tensor.name} (norm)`).toBeLessThanOrEqual(GRADIENT_TOLERANCE * norm(expected));
      expect(maxAbs(error), `${tensor.name} (max)`).toBeLessThanOrEqual(GRADIENT_TOLERANCE * maxAbs(expected));
    }
  });

  it('hands over the factors X, Δ of every dense weight gradient: Xᵀ·Δ is that gradient', async () => {
    const batch = 5;
    const params = randomParameters(layout, 7);
    const images = randomImages(batch, layout.inputSize, 8);
    const labels = randomLabels(batch, layout.classCount, 9);
    const { gradient, factors } = await backend.lossAndGradient(params, images, labels, batch);
    const dense = layout.layers.filter((layer) => layer.type === 'dense');
    expect([...(factors?.keys() ?? [])].sort()).toEqual(
      dense.map((layer) => layout.tensors.indexOf(layer.weight)).sort(),
    );
    for (const layer of dense) {
      const f = factors!.get(layout.tensors.indexOf(layer.weight))!;
      expect(f.batch).toBe(batch);
      const [rows, cols] = layer.weight.shape;
      const product = new Float64Array(rows * cols);
      for (let n = 0; n < batch; n++) {
        for (let i = 0; i < rows; i++)
          for (let j = 0; j < cols; j++) product[i * cols + j]! += f.input[n * rows + i]! * f.delta[n * cols + j]!;
      }
      const expected = tensorView(gradient, layer.weight);
      // The backend sums the same products in double and stores float32: equal to its rounding.
      expect(maxAbs(difference(product, expected)), layer.name).toBeLessThanOrEqual(1e-6 * maxAbs(expected));
    }
  });

  it('gives the same result when called again (workspaces are reset, not accumulated)', async () => {
    const params = randomParameters(layout, 5);
    const images = randomImages(4, layout.inputSize, 6);
    const labels = randomLabels(4, layout.classCount, 7);
    const first = await backend.lossAndGradient(params, images, labels, 4);
    const firstLoss = first.loss;
    const firstGradient = Float32Array.from(first.gradient);
    await backend.lossAndGradient(params, randomImages(4, layout.inputSize, 8), labels, 4);
    const again = await backend.lossAndGradient(params, images, labels, 4);
    expect(again.loss).toBe(firstLoss);
    // A first differing index, rather than toEqual, which is slow on 10⁵-element arrays.
    expect(again.gradient.findIndex((value, i) => value !== firstGradient[i])).toBe(-1);
  });

  it('rejects parameters or images of the wrong size', async () => {
    const params = randomParameters(layout, 5);
    await expect(backend.predict(params.subarray(1), new Float32Array(layout.inputSize), 1)).rejects.toThrow(
      RangeError,
    );
    await expect(backend.predict(params, new Float32Array(layout.inputSize), 2)).rejects.toThrow(RangeError);
  });
});

describe('CPU backend: the factors it hands to spectral compression', () => {
  it('a convolution with few output pixels gets its im2col factors, whose product is its kernel gradient', async () => {
    const layout = cnnLayout(SMALL_CNN);
    const batch = 4;
    const { gradient, factors } = await createCpuBackend(layout).lossAndGradient(
      randomParameters(layout, 3),
      randomImages(batch, layout.inputSize, 4),
      randomLabels(batch, layout.classCount, 5),
      batch,
    );
    const conv2 = findTensor(layout, 'conv2.weight');
    // conv1 (8×9, 4 examples × 64 pixels) is far from it; the dense layer always has its factors.
    expect([...factors!.keys()].map((k) => layout.tensors[k]!.name)).toEqual(['conv2.weight', 'dense.weight']);
    const { input, delta, batch: inner } = factors!.get(layout.tensors.indexOf(conv2))!;
    const [out, taps] = conv2.shape;
    expect(inner).toBe(batch * 2 * 2);
    const g = tensorView(gradient, conv2);
    const product = Float64Array.from({ length: out * taps }, (_, k) => {
      let s = 0;
      for (let b = 0; b < inner; b++) s += input[b * out + Math.floor(k / taps)]! * delta[b * taps + (k % taps)]!;
      return s;
    });
    expect(maxAbs(difference(product, g))).toBeLessThanOrEqual(GRADIENT_TOLERANCE * maxAbs(g));
  });

  it('LeNet at batch 32 hands over the dense layer’s factors only (batch·positions ≫ kernel)', async () => {
    const layout = createModelLayout('cnn');
    const { factors } = await createCpuBackend(layout).lossAndGradient(
      randomParameters(layout, 6),
      randomImages(32, layout.inputSize, 7),
      randomLabels(32, 10, 8),
      32,
    );
    expect([...factors!.keys()].map((k) => layout.tensors[k]!.name)).toEqual(['dense.weight']);
  });
});
