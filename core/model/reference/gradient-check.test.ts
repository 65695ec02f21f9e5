/**
 * The reference backward pass against central finite differences of the
 * reference loss, in Float64.
 *
 * Stencil: the fourth-order central difference
 *   g ≈ (−L(θ+2h) + 8L(θ+h) − 8L(θ−h) + L(θ−2h)) / 12h,  h = 1e-4.
 * Its truncation error is O(h⁴) ≈ 1e-16 here, and the rounding error of the
 * loss (a few ulp of L ≈ 2.3, divided by h) is ≈ 1e-12 absolute, so the
 * estimate is good to ~1e-8 relative wherever |g| ≳ 1e-4. The plain two-point
 * difference cannot reach 1e-6 relative at any h on these models: its
 * truncation error (h²) and rounding error (1/h) meet near 1e-10 absolute.
 * A smaller h than 1e-4 would add rounding error; a larger one (1e-3) lets
 * the perturbation cross ReLU kinks and flip max-pool winners, where the
 * loss is not differentiable.
 *
 * Kinks: a parameter whose stencil [θ−2h, θ+2h] changes the sign of some
 * ReLU input or the winner of some max-pool window straddles a point where
 * the loss has no derivative; finite differences mean nothing there, so it is
 * skipped (and counted: at most 5% of the checked parameters may be skipped).
 * Conv biases are the usual case, since one moves ~10³ pre-activations.
 *
 * Tolerance: |fd − bp| ≤ 1e-6 · max(|fd|, |bp|, 1e-5). The floor 1e-5 turns
 * the test into an absolute one (1e-11) for gradients so small that rounding
 * dominates; weights that see only zero pixels have gradient exactly 0 and
 * their finite difference is exactly 0 too.
 */
import { describe, expect, it } from 'vitest';
import { cnnLayout, createModelLayout, mlpLayout, type ModelLayout } from '../layout';
import { randomImages, randomLabels, randomParameters, randomSubset } from '../testing/fixtures';
import { softmaxCrossEntropyLoss } from './softmax-cross-entropy';
import { referenceForward, referenceLossAndGradient } from './network';

const STEP = 1e-4;
const RELATIVE_TOLERANCE = 1e-6;
const GRADIENT_FLOOR = 1e-5;
const MAX_SKIPPED_FRACTION = 0.05;

interface CheckOptions {
  readonly batch: number;
  /** Parameter indices to check; all when omitted. */
  readonly indices?: readonly number[];
}

interface CheckResult {
  /** Worst |fd − bp| / (tol · max(|fd|, |bp|, floor)) over the checked parameters; ≤ 1 passes. */
  readonly worst: number;
  readonly worstIndex: number;
  readonly checked: number;
  /** Parameters skipped because their stencil crosses a kink. */
  readonly skipped: number;
}

/**
 * Which side of every kink the forward pass is on: one entry per ReLU input
 * (positive or not) and per max-pool window (index of the first maximum).
 */
function kinkPattern(layout: ModelLayout, activations: readonly Float64Array[]): number[] {
  const pattern: number[] = [];
  layout.layers.forEach((layer, i) => {
    const x = activations[i]!;
    if (layer.type === 'relu') {
      for (const value of x) pattern.push(value > 0 ? 1 : 0);
    } else if (layer.type === 'maxpool2d') {
      const { width } = layer.input;
      for (let topLeft = 0; topLeft < x.length; topLeft += 2) {
        if (Math.floor(topLeft / width) % 2 === 1) continue; // odd rows are bottom halves of windows
        const window = [x[topLeft]!, x[topLeft + 1]!, x[topLeft + width]!, x[topLeft + width + 1]!];
        pattern.push(window.indexOf(Math.max(...window)));
      }
    }
  });
  return pattern;
}

function gradientCheck(layout: ModelLayout, seed: number, options: CheckOptions): CheckResult {
  const { batch } = options;
  const params = Float64Array.from(randomParameters(layout, seed));
  const images = randomImages(batch, layout.inputSize, seed + 1);
  const labels = randomLabels(batch, layout.classCount, seed + 2);
  const { gradient } = referenceLossAndGradient(layout, params, images, labels, batch);

  const baseline = kinkPattern(layout, referenceForward(layout, params, images, batch));
  /** The loss with params[index] moved by delta, and whether that crossed a kink. */
  const probe = (index: number, delta: number): { loss: number; crossesKink: boolean } => {
    const saved = params[index]!;
    params[index] = saved + delta;
    const activations = referenceForward(layout, params, images, batch);
    params[index] = saved;
    const crossesKink = kinkPattern(layout, activations).some((side, k) => side !== baseline[k]);
    return { loss: softmaxCrossEntropyLoss(activations.at(-1)!, labels, batch, layout.classCount), crossesKink };
  };

  const indices = options.indices ?? Array.from({ length: layout.parameterCount }, (_, i) => i);
  let worst = 0;
  let worstIndex = -1;
  let skipped = 0;
  for (const index of indices) {
    const plus2 = probe(index, 2 * STEP);
    const plus1 = probe(index, STEP);
    const minus1 = probe(index, -STEP);
    const minus2 = probe(index, -2 * STEP);
    if ([plus2, plus1, minus1, minus2].some((p) => p.crossesKink)) {
      skipped++;
      continue;
    }
    const fd = (-plus2.loss + 8 * plus1.loss - 8 * minus1.loss + minus2.loss) / (12 * STEP);
    const bp = gradient[index]!;
    const ratio = Math.abs(fd - bp) / (RELATIVE_TOLERANCE * Math.max(Math.abs(fd), Math.abs(bp), GRADIENT_FLOOR));
    if (ratio > worst) {
      worst = ratio;
      worstIndex = index;
    }
  }
  return { worst, worstIndex, checked: indices.length, skipped };
}

/** Every bias index, plus `weightCount` random weight indices. */
function biasesAndSampledWeights(layout: ModelLayout, weightCount: number, seed: number): number[] {
  const biases = layout.tensors
    .filter((t) => t.role === 'bias')
    .flatMap((t) => Array.from({ length: t.size }, (_, i) => t.offset + i));
  const weights = layout.tensors
    .filter((t) => t.role === 'weight')
    .flatMap((t) => Array.from({ length: t.size }, (_, i) => t.offset + i));
  return [...biases, ...randomSubset(weights.length, weightCount, seed).map((i) => weights[i]!)];
}

function expectPasses(result: CheckResult): void {
  expect(result.worst, `parameter ${result.worstIndex}`).toBeLessThanOrEqual(1);
  expect(result.skipped, 'parameters skipped at kinks').toBeLessThanOrEqual(MAX_SKIPPED_FRACTION * result.checked);
}

describe('reference backprop matches finite differences', () => {
  it('tiny MLP (20-8-5), every parameter', () => {
    const layout = mlpLayout({ inputSize: 20, hiddenSize: 8, classCount: 5 });
    const result = gradientCheck(layout, 11, { batch: 3 });
    expect(result.checked).toBe(layout.parameterCount);
    expectPasses(result);
  });

  it('tiny CNN (2×14×14, 3×3 kernels, 3 and 4 channels), every parameter', () => {
    const layout = cnnLayout({
      input: { channels: 2, height: 14, width: 14 },
      kernelSize: 3,
      conv1Channels: 3,
      conv2Channels: 4,
      classCount: 5,
    });
    const result = gradientCheck(layout, 12, { batch: 2 });
    expect(result.checked).toBe(layout.parameterCount);
    expectPasses(result);
  });

  it('MLP 784-128-10: all biases and 200 random weights', () => {
    const layout = createModelLayout('mlp');
    const result = gradientCheck(layout, 13, { batch: 2, indices: biasesAndSampledWeights(layout, 200, 13) });
    expectPasses(result);
  });

  it('CNN (LeNet-style, MNIST size): all biases and 60 random weights', () => {
    const layout = createModelLayout('cnn');
    const result = gradientCheck(layout, 14, { batch: 2, indices: biasesAndSampledWeights(layout, 60, 14) });
    expectPasses(result);
  });
});
