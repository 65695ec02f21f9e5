/**
 * The wire sizes against real encodings: the maximum bounds every message a
 * scheme can produce and is reached where the formula says; the expected
 * bytes equal the encoded length for fixed-size schemes and spectral ATOMO
 * when every atom is kept; the dense baseline is what `none` sends.
 */
import { describe, expect, it } from 'vitest';
import { SCHEMES, SCHEME_NAMES } from '../atomo';
import { bucketCount } from '../atomo/schemes/qsgd';
import type { LayerSample } from '../atomo/types';
import { seededRng } from '../testing/seeded';
import { createModelLayout } from '../model/layout';
import { fixtureUniform } from '../model/testing/fixtures';
import { encodeForWire, encodeLayer } from './index';
import { randomQsgd } from './testing/random-samples';
import { denseBytes, expectedBytes, expectedLayerBytes, maxLayerBytes } from './sizes';

const layout = createModelLayout('mlp');
const stream = { seed: 3, worker: 1, round: 0, layer: 0 };

/** A gradient of `n` entries, non-zero and of full rank almost surely (uniform in (−1, 1) from a fixed seed). */
function gradient(n: number): Float32Array {
  return Float32Array.from({ length: n }, (_, i) => 2 * fixtureUniform(8, 0, i) - 1 || 0.5);
}

describe('wire sizes', () => {
  it('bounds the encoded bytes of every scheme, and the bound is reached by a sample that keeps everything', () => {
    const shape = [6, 5] as const;
    const g = gradient(30);
    for (const scheme of SCHEME_NAMES) {
      for (const budget of [1, 3, Infinity]) {
        // atomo-auto's knob is the layer's bytes: from a few atoms' worth to more than float32.
        const { sample } = SCHEMES[scheme].compress(
          g,
          shape,
          { budget, levels: 7, byteBudget: Math.min(40 * budget, 1e6) },
          stream,
        );
        expect(encodeLayer(sample, 0).length, `${scheme} s=${budget}`).toBeLessThanOrEqual(
          maxLayerBytes(scheme, shape, 7),
        );
      }
    }
    // All kept: dense, spectral and PowerSGD at full rank, fixed-width QSGD and TernGrad are exactly at the bound.
    for (const scheme of ['none', 'atomo-svd', 'qsgd', 'terngrad', 'powersgd'] as const) {
      const { sample } = SCHEMES[scheme].compress(
        g,
        shape,
        { budget: Infinity, levels: 7, qsgdCoding: 'fixed' },
        stream,
      );
      expect(encodeLayer(sample, 0).length, scheme).toBe(maxLayerBytes(scheme, shape, 7, 0, 'fixed'));
    }
  });

  it('bounds Elias-coded QSGD by every level at s, reached exactly, in buckets with a short last one', () => {
    for (const [levels, bucketSize, n] of [
      [1, 0, 30],
      [7, 4, 30],
      [4, 512, 1100],
      [65535, 16, 40],
    ] as const) {
      const shape = [1, n] as const;
      const full: LayerSample = {
        scheme: 'qsgd',
        shape,
        levels,
        coding: 'elias',
        bucketSize,
        norms: new Float32Array(bucketCount(n, bucketSize)).fill(1),
        negative: new Uint8Array(n),
        level: new Uint16Array(n).fill(levels),
      };
      const bound = maxLayerBytes('qsgd', shape, levels, bucketSize, 'elias');
      expect(encodeLayer(full, 0).length, `s=${levels} d=${bucketSize}`).toBe(bound);
      // Random levels and sparse ones stay below it.
      const rng = seededRng(levels);
      for (let trial = 0; trial < 20; trial++) {
        const sample = randomQsgd(rng, shape, levels, bucketSize, 'elias');
        expect(encodeLayer(sample, 0).length).toBeLessThanOrEqual(bound);
      }
    }
  });

  it('expects exactly the bytes sent for the fixed-size schemes and for spectral ATOMO keeping every atom', () => {
    const shape = [8, 4] as const;
    const g = gradient(32);
    for (const scheme of ['none', 'qsgd', 'terngrad'] as const) {
      const { sample } = SCHEMES[scheme].compress(g, shape, { levels: 300, qsgdCoding: 'fixed' }, stream);
      expect(expectedLayerBytes({ scheme, budget: 0, levels: 300, qsgdCoding: 'fixed' }, shape, 32), scheme).toBe(
        encodeForWire(sample, 0).length,
      );
    }
    const { sample } = SCHEMES['atomo-svd'].compress(g, shape, { budget: 4 }, stream);
    expect(expectedLayerBytes({ scheme: 'atomo-svd', budget: 4, levels: 1 }, shape, 32)).toBe(
      encodeForWire(sample, 0).length,
    );
    // Four atoms of an 8×4 layer (12 + 4 + 4·4·13 = 224 bytes) are more than the layer as float32: it goes dense.
    expect(encodeLayer(sample, 0).length).toBe(224);
    expect(expectedLayerBytes({ scheme: 'atomo-svd', budget: 4, levels: 1 }, shape, 32)).toBe(12 + 4 * 32);
    // At most rank ≤ batch atoms exist, whatever the budget.
    expect(expectedLayerBytes({ scheme: 'atomo-svd', budget: 4, levels: 1 }, shape, 2)).toBe(
      12 + 4 + 4 * 2 * (8 + 4 + 1),
    );
  });

  it('agrees with the wire-format worked example for one 784×128 layer', () => {
    const one = { ...layout, tensors: [layout.tensors[0]!] };
    expect(expectedBytes(one, { scheme: 'atomo-svd', budget: 4, levels: 1 }, 32)).toBe(14_624);
    const fixed = { scheme: 'qsgd', budget: 0, qsgdCoding: 'fixed' } as const;
    expect(expectedBytes(one, { ...fixed, levels: 4 }, 32)).toBe(50_198);
    expect(expectedBytes(one, { ...fixed, levels: 3, bucketSize: 512 }, 32)).toBe(38_434);
    expect(expectedBytes(one, { scheme: 'terngrad', budget: 0, levels: 1 }, 32)).toBe(25_104);
  });

  it('counts the dense baseline as what scheme none sends for the whole model', () => {
    const g = gradient(layout.parameterCount);
    const sent = layout.tensors.reduce((sum, tensor, layer) => {
      const { sample } = SCHEMES.none.compress(
        g.subarray(tensor.offset, tensor.offset + tensor.size),
        tensor.shape,
        {},
        stream,
      );
      return sum + encodeLayer(sample, layer).length;
    }, 0);
    expect(denseBytes(layout)).toBe(sent);
    expect(expectedBytes(layout, { scheme: 'none', budget: 0, levels: 1 }, 32)).toBe(sent);
  });
});
