import { describe, expect, it } from 'vitest';
import { sgdMomentumStep } from './optimiser';

describe('sgdMomentumStep', () => {
  it('follows v ← μv + g, θ ← θ − ηv over two steps', () => {
    const params = Float32Array.of(1, -2);
    const velocity = new Float32Array(2);
    sgdMomentumStep(params, velocity, Float32Array.of(0.5, 1), 0.1, 0.9);
    // v = (0.5, 1), θ = (1 − 0.05, −2 − 0.1)
    expect(Array.from(velocity)).toEqual([0.5, 1]);
    expect(params[0]).toBeCloseTo(0.95, 6);
    expect(params[1]).toBeCloseTo(-2.1, 6);
    sgdMomentumStep(params, velocity, Float32Array.of(0.5, -1), 0.1, 0.9);
    // v = (0.45 + 0.5, 0.9 − 1) = (0.95, −0.1), θ = (0.95 − 0.095, −2.1 + 0.01)
    expect(velocity[0]).toBeCloseTo(0.95, 6);
    expect(velocity[1]).toBeCloseTo(-0.1, 6);
    expect(params[0]).toBeCloseTo(0.855, 6);
    expect(params[1]).toBeCloseTo(-2.09, 6);
  });

  it('is plain SGD when momentum is 0', () => {
    const params = Float32Array.of(3);
    const velocity = Float32Array.of(123); // ignored: μ = 0 forgets it
    sgdMomentumStep(params, velocity, Float32Array.of(2), 0.25, 0);
    expect(params[0]).toBe(2.5);
  });

  it('rejects buffers of different lengths', () => {
    expect(() => sgdMomentumStep(new Float32Array(2), new Float32Array(1), new Float32Array(2), 0.1, 0.9)).toThrow(
      RangeError,
    );
  });
});
