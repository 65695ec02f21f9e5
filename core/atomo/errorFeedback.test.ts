import { describe, expect, it } from 'vitest';
import { randomMatrix } from '../linalg/random-matrix';
import type { StreamId } from '../rng';
import { compressLayer } from './errorFeedback';
import { reconstruct } from './reconstruct';
import { SCHEMES, type LayerMemory } from './schemes';
import { randomGradient } from './testing/gradients';
import { SCHEME_NAMES, isBiased, usesErrorFeedback, type Shape } from './types';
import { realisedError } from './variance';

const streamOf = (round: number): StreamId => ({ seed: 3, worker: 2, round, layer: 1 });

describe('error feedback', () => {
  it('is off unless asked for (or PowerSGD): the scheme itself, bit for bit, memory untouched', () => {
    const { grad, shape } = randomGradient();
    for (const scheme of SCHEME_NAMES.filter((s) => s !== 'powersgd')) {
      const memory: LayerMemory = {};
      const options = { budget: 64, levels: 2, byteBudget: 400, memory };
      const direct = SCHEMES[scheme].compress(grad, shape, options, streamOf(0));
      const through = compressLayer(scheme, grad, shape, options, streamOf(0));
      expect(reconstruct(through.sample)).toEqual(reconstruct(direct.sample));
      expect(through.variance).toBe(direct.variance);
      expect(memory.error).toBeUndefined();
    }
  });

  it('entry-wise ATOMO sends g + e, keeps e ← M − ĝ: Σĝ + e = Σg; reports ‖ĝ − g‖²', () => {
    const shape: Shape = [20, 10];
    const memory: LayerMemory = {};
    const sumG = new Float64Array(200);
    const sumEstimate = new Float64Array(200);
    for (let round = 0; round < 50; round++) {
      const grad = Float32Array.from(randomMatrix(20, 10, 500 + round));
      const { sample, variance } = compressLayer(
        'atomo-entry',
        grad,
        shape,
        { budget: 20, errorFeedback: true, memory },
        streamOf(round),
      );
      const estimate = reconstruct(sample);
      expect(variance).toBe(realisedError(estimate, grad));
      for (let i = 0; i < 200; i++) {
        sumG[i]! += grad[i]!;
        sumEstimate[i]! += estimate[i]!;
      }
    }
    // Only float32 rounding of each round's M and ĝ is lost (≲ 1e-6 each here).
    const lost = sumG.map((x, i) => Math.abs(x - sumEstimate[i]! - memory.error![i]!));
    expect(Math.max(...lost)).toBeLessThan(1e-4);
    expect(Math.max(...memory.error!.map(Math.abs))).toBeGreaterThan(0.1);
  });

  it('marks PowerSGD and every scheme with error feedback as biased, except the uncompressed one', () => {
    expect(SCHEME_NAMES.filter((s) => isBiased(s, false))).toEqual(['powersgd']);
    expect(SCHEME_NAMES.filter((s) => !isBiased(s, true))).toEqual(['none']);
  });

  it('marks clipped TernGrad biased (unbiased for the clipped g only) and gives it no error feedback', () => {
    expect(SCHEME_NAMES.filter((s) => isBiased(s, false, 2.5))).toEqual(['terngrad', 'powersgd']);
    expect(isBiased('terngrad', false, 0)).toBe(false);
    expect(isBiased('terngrad', false)).toBe(false);
    expect(usesErrorFeedback('terngrad', false)).toBe(false);
    // Biased, yet the scheme itself: bit for bit the clipped sample, the memory untouched.
    const { grad, shape } = randomGradient();
    const memory: LayerMemory = {};
    const options = { budget: 0, levels: 1, terngradClip: 2.5, memory };
    const direct = SCHEMES.terngrad.compress(grad, shape, options, streamOf(0));
    const through = compressLayer('terngrad', grad, shape, options, streamOf(0));
    expect(reconstruct(through.sample)).toEqual(reconstruct(direct.sample));
    expect(memory.error).toBeUndefined();
  });
});
