import { describe, expect, it } from 'vitest';
import { reconstruct } from './reconstruct';
import type { LayerSample } from './types';

// Hand-built samples with small exact values: every result below is exact in
// float32, so the comparisons are exact.
describe('reconstruct', () => {
  it('dense: a copy of the values', () => {
    const values = Float32Array.of(1, -2, 3, 4);
    const out = reconstruct({ scheme: 'none', shape: [2, 2], values });
    expect(Array.from(out)).toEqual([1, -2, 3, 4]);
    expect(out).not.toBe(values);
  });

  it('entry-wise: the sparse matrix of kept λ/p', () => {
    const sample: LayerSample = {
      scheme: 'atomo-entry',
      shape: [2, 3],
      indices: Uint32Array.of(0, 4),
      values: Float32Array.of(2.5, -8),
    };
    expect(Array.from(reconstruct(sample))).toEqual([2.5, 0, 0, 0, -8, 0]);
  });

  it('spectral: Σ scaleᵢ uᵢvᵢᵀ', () => {
    const sample: LayerSample = {
      scheme: 'atomo-svd',
      shape: [2, 3],
      count: 2,
      u: Float32Array.of(1, 0, 0, 1),
      v: Float32Array.of(1, 2, 0, 0, 0, 1),
      scales: Float32Array.of(3, -2),
    };
    // 3·[1,0]ᵀ[1,2,0] − 2·[0,1]ᵀ[0,0,1]
    expect(Array.from(reconstruct(sample))).toEqual([3, 6, 0, 0, 0, -2]);
  });

  it('spectral with no atoms: zero', () => {
    const sample: LayerSample = {
      scheme: 'atomo-svd',
      shape: [2, 2],
      count: 0,
      u: new Float32Array(0),
      v: new Float32Array(0),
      scales: new Float32Array(0),
    };
    expect(Array.from(reconstruct(sample))).toEqual([0, 0, 0, 0]);
  });

  it('qsgd: norm · sign · level/s', () => {
    const sample: LayerSample = {
      scheme: 'qsgd',
      shape: [1, 4],
      levels: 4,
      bucketSize: 0,
      norms: Float32Array.of(2),
      negative: Uint8Array.of(0, 1, 1, 0),
      level: Uint16Array.of(4, 1, 0, 2),
    };
    expect(Array.from(reconstruct(sample))).toEqual([2, -0.5, -0, 1]);
  });

  it('terngrad: scaler · t', () => {
    const sample: LayerSample = { scheme: 'terngrad', shape: [3, 1], scaler: 1.5, ternary: Int8Array.of(-1, 0, 1) };
    expect(Array.from(reconstruct(sample))).toEqual([-1.5, 0, 1.5]);
  });
});
