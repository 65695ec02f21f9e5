/**
 * Deterministic inputs for the model tests: parameters, images and labels
 * drawn from Philox streams, so every test sees the same numbers every run.
 */
import { randomBits, uniform24, type StreamId } from '../../rng';
import { heInitialise } from '../init';
import type { ModelLayout } from '../layout';

/** StreamId.layer for test fixtures, away from init, data and gradient-sampling streams. */
const FIXTURE_STREAM_TAG = 0x7e57_0001;

function fixtureStream(seed: number, purpose: number): StreamId {
  return { seed, worker: purpose, round: 0, layer: FIXTURE_STREAM_TAG };
}

/** A uniform in [0, 1) at position `index` of fixture stream (seed, purpose). */
export function fixtureUniform(seed: number, purpose: number, index: number): number {
  return uniform24(randomBits(fixtureStream(seed, purpose), index));
}

/** He-initialised weights plus small non-zero biases, so bias paths are exercised too. */
export function randomParameters(layout: ModelLayout, seed: number, biasScale = 0.1): Float32Array {
  const params = heInitialise(layout, seed);
  for (const tensor of layout.tensors) {
    if (tensor.role !== 'bias') continue;
    for (let i = 0; i < tensor.size; i++) {
      params[tensor.offset + i] = biasScale * (2 * fixtureUniform(seed, 1, tensor.offset + i) - 1);
    }
  }
  return params;
}

/**
 * `count` images of `size` pixels in [0, 1), where a fraction `zeroFraction`
 * of pixels is exactly 0, like MNIST's background (the CPU backend skips zeros).
 */
export function randomImages(count: number, size: number, seed: number, zeroFraction = 0.5): Float32Array {
  const images = new Float32Array(count * size);
  for (let i = 0; i < images.length; i++) {
    images[i] = fixtureUniform(seed, 2, 2 * i) < zeroFraction ? 0 : fixtureUniform(seed, 2, 2 * i + 1);
  }
  return images;
}

/** `count` labels uniform in 0..classes − 1. */
export function randomLabels(count: number, classes: number, seed: number): Uint8Array {
  return Uint8Array.from({ length: count }, (_, i) => Math.floor(fixtureUniform(seed, 3, i) * classes));
}

/** `count` distinct indices below `bound`, in increasing order (a partial Fisher–Yates shuffle). */
export function randomSubset(bound: number, count: number, seed: number): number[] {
  const pool = Array.from({ length: bound }, (_, i) => i);
  for (let i = 0; i < Math.min(count, bound); i++) {
    const j = i + Math.floor(fixtureUniform(seed, 4, i) * (bound - i));
    [pool[i], pool[j]] = [pool[j]!, pool[i]!];
  }
  return pool.slice(0, count).sort((a, b) => a - b);
}
