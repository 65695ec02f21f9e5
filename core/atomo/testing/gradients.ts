/** The seeded test gradients (64×32, float32) the scheme tests share. */
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
