/** The seeded test gradients the scheme tests share (64×32 float32 unless named otherwise). */
import type { GradientFactors } from '../../linalg/factoredSvd';
import { lowRankMatrix, randomMatrix, sumOverInner } from '../../linalg/random-matrix';
import { createCpuComputations } from '../../model/cpu/backend';
import { cnnLayout, findTensor, type CnnOptions } from '../../model/layout';
import { randomImages, randomLabels, randomParameters } from '../../model/testing/fixtures';
import { spectralDecomposition } from '../decompositions/spectral';
import type { LayerMemory } from '../schemes/scheme';
import type { Shape } from '../types';

/** A named test gradient. */
export interface TestGradient {
  readonly name: string;
  readonly grad: Float32Array;
  readonly shape: Shape;
}

export const TEST_SHAPE: Shape = [64, 32];

/**
 * Gaussian entries plus two spikes (so water-filling saturates some p at 1)
 * and a few exact zeros (p = 0, never sent).
 */
export function randomGradient(seed = 1): TestGradient {
  const [rows, cols] = TEST_SHAPE;
  const grad = Float32Array.from(randomMatrix(rows, cols, seed));
  grad[0] = 40;
  grad[77] = -25;
  for (const j of [3, 100, 2047]) grad[j] = 0;
  return { name: 'random', grad, shape: TEST_SHAPE };
}

/** Rank 3 in exact arithmetic; rounding to float32 adds tiny (≈1e-7 relative) singular values. */
export function lowRankGradient(seed = 2): TestGradient {
  const [rows, cols] = TEST_SHAPE;
  return { name: 'low-rank', grad: Float32Array.from(lowRankMatrix(rows, cols, 3, seed)), shape: TEST_SHAPE };
}

/** A gradient given with its factors, as a dense layer's backward pass has them: grad = float32(Xᵀ·Δ). */
export interface FactoredTestGradient extends TestGradient {
  readonly factors: GradientFactors;
}

/**
 * A batch-6 "dense layer" gradient: left (6×64, the inputs) and right (6×32,
 * the output deltas) Gaussian, one example scaled up so σ₀ stands out and
 * water-filling saturates it at small budgets.
 */
export function factoredGradient(seed = 3): FactoredTestGradient {
  const [rows, cols] = TEST_SHAPE;
  const inner = 6;
  const left = Float32Array.from(randomMatrix(inner, rows, seed));
  const right = Float32Array.from(randomMatrix(inner, cols, seed + 1));
  for (let i = 0; i < rows; i++) left[i]! *= 4;
  const grad = Float32Array.from(
    sumOverInner(rows, cols, inner, (i, j, b) => left[b * rows + i]! * right[b * cols + j]!),
  );
  return { name: 'factored', grad, shape: TEST_SHAPE, factors: { batch: inner, input: left, delta: right } };
}

/**
 * The small CNN whose second convolution takes the factored route at batch 4: 4 output pixels × 4 examples = 16 < 24
 * channels.
 */
export const SMALL_CNN: CnnOptions = {
  input: { channels: 1, height: 10, width: 10 },
  kernelSize: 3,
  conv1Channels: 8,
  conv2Channels: 24,
  classCount: 10,
};

/**
 * A convolution's kernel gradient (24 × 72) with its im2col factors, as the
 * CPU backend hands them over for SMALL_CNN at batch 4 (random weights and
 * images): rank ≤ 16.
 */
export function convFactoredGradient(seed = 4): FactoredTestGradient {
  const layout = cnnLayout(SMALL_CNN);
  const batch = 4;
  const { gradient, factors } = createCpuComputations(layout).lossAndGradient(
    randomParameters(layout, seed),
    randomImages(batch, layout.inputSize, seed + 1),
    randomLabels(batch, layout.classCount, seed + 2),
    batch,
  );
  const tensor = findTensor(layout, 'conv2.weight');
  const kept = factors!.get(layout.tensors.indexOf(tensor))!;
  return {
    name: 'convolution (im2col factors)',
    grad: gradient.slice(tensor.offset, tensor.offset + tensor.size),
    shape: tensor.shape,
    factors: { batch: kept.batch, input: kept.input.slice(), delta: kept.delta.slice() },
  };
}

/** A gradient without factors and the layer memory of the round before it. */
export interface WarmTestGradient {
  readonly gradient: TestGradient;
  readonly memory: LayerMemory;
}

/**
 * A rank-12 96×64 gradient L·(R + 10⁻³R′) and, as last round's memory, the
 * right singular subspace of L·R: the range finder's case (no factors, a
 * rank well below the short side).
 */
export function rangeFinderGradient(seed = 5): WarmTestGradient {
  const [rows, cols, rank] = [96, 64, 12];
  const left = randomMatrix(rows, rank, seed);
  const right = randomMatrix(rank, cols, seed + 1);
  const moved = randomMatrix(rank, cols, seed + 2);
  const product = (r: Float64Array) =>
    Float32Array.from({ length: rows * cols }, (_, k) => {
      let s = 0;
      for (let p = 0; p < rank; p++) s += left[Math.floor(k / cols) * rank + p]! * r[p * cols + (k % cols)]!;
      return s;
    });
  const memory: LayerMemory = {};
  spectralDecomposition(product(right), [rows, cols], undefined, memory);
  const grad = product(right.map((x, k) => x + 1e-3 * moved[k]!));
  return { gradient: { name: 'warm-started range finder', grad, shape: [rows, cols] }, memory };
}

/**
 * A few large entries at seeded places (30 of 2,048) and zeros elsewhere: entries suit it, spectral and DCT atoms
 * spread it.
 */
export function sparseGradient(seed = 4): TestGradient {
  const [rows, cols] = TEST_SHAPE;
  const grad = new Float32Array(rows * cols);
  const values = randomMatrix(1, 60, seed);
  for (let k = 0; k < 30; k++)
    grad[Math.floor(Math.abs(values[2 * k]!) * 997 + k * 67) % grad.length] =
      values[2 * k + 1]! + Math.sign(values[2 * k + 1]!);
  return { name: 'sparse', grad, shape: TEST_SHAPE };
}

/**
 * Twelve low-frequency cosine atoms d_k d_lᵀ (k, l < 8, core/linalg/dct.ts)
 * with seeded weights: a smooth gradient of rank up to 8 whose DCT has 12
 * non-zero coefficients (plus float32 rounding), so DCT atoms suit it.
 */
export function smoothGradient(seed = 5): TestGradient {
  const [rows, cols] = TEST_SHAPE;
  const weights = randomMatrix(1, 36, seed);
  const grad = new Float64Array(rows * cols);
  const cosine = (n: number, k: number, i: number) =>
    Math.sqrt((k === 0 ? 1 : 2) / n) * Math.cos((Math.PI * (2 * i + 1) * k) / (2 * n));
  for (let a = 0; a < 12; a++) {
    const k = Math.floor(Math.abs(weights[3 * a]!) * 100) % 8;
    const l = Math.floor(Math.abs(weights[3 * a + 1]!) * 100) % 8;
    const w = 4 * weights[3 * a + 2]!;
    for (let i = 0; i < rows; i++)
      for (let j = 0; j < cols; j++) grad[i * cols + j]! += w * cosine(rows, k, i) * cosine(cols, l, j);
  }
  return { name: 'smooth', grad: Float32Array.from(grad), shape: TEST_SHAPE };
}
