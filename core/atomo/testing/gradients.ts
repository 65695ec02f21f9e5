/** The seeded test gradients (64×32, float32) the scheme tests share. */
import type { GradientFactors } from '../../linalg/factoredSvd';
import { lowRankMatrix, randomMatrix } from '../../linalg/random-matrix';
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
  const grad = new Float32Array(rows * cols);
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      let s = 0;
      for (let b = 0; b < inner; b++) s += left[b * rows + i]! * right[b * cols + j]!;
      grad[i * cols + j] = s;
    }
  }
  return { name: 'factored', grad, shape: TEST_SHAPE, factors: { batch: inner, input: left, delta: right } };
}
