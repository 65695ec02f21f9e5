/**
 * Every scheme on a real gradient of the wide MLP (1.07M parameters; CPU backend, batch 32, synthetic digits): each
 * layer's sample encodes to exactly the bytes the codec predicts and decodes to the same reconstruction, the biggest
 * layer (784 × 1024) included; `none` sends the 4.28 MB float32 gradient and every compressing scheme at its default
 * setting less than a fifth of it.
 */
import { describe, expect, it } from 'vitest';
import { SCHEME_NAMES, type Compression } from '../atomo/types';
import { reconstruct } from '../atomo/reconstruct';
import { decodeLayer, encodedByteLength, encodeForWire, encodeLayer } from '../codec';
import { denseBytes } from '../codec/sizes';
import { createCpuBackend } from '../model/cpu/backend';
import { heInitialise } from '../model/init';
import { createModelLayout } from '../model/layout';
import { syntheticDigits } from '../model/testing/synthetic';
import { DEFAULT_BUDGETS, DEFAULT_QSGD_BUCKET, DEFAULT_QSGD_LEVELS, defaultByteBudget } from '../schema/runConfig';
import { compressOnCpu, layerGradients } from './compression';

const layout = createModelLayout('mlp-wide');
const BATCH = 32;

async function realGradient() {
  const backend = createCpuBackend(layout);
  const digits = syntheticDigits(BATCH, 1, 5);
  return backend.lossAndGradient(heInitialise(layout, 7), digits.images, digits.labels, BATCH);
}

/** Entries that differ (an element-wise toEqual over a million floats is slow). */
function differences(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return Math.max(a.length, b.length);
  let count = 0;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) count++;
  return count;
}

function compressionOf(scheme: (typeof SCHEME_NAMES)[number]): Compression {
  return {
    scheme,
    budget: DEFAULT_BUDGETS[scheme],
    levels: DEFAULT_QSGD_LEVELS,
    bucketSize: DEFAULT_QSGD_BUCKET,
    ...(scheme === 'atomo-auto' ? { byteBudget: defaultByteBudget('mlp-wide', BATCH) } : {}),
  };
}

describe('compression of the wide MLP', () => {
  it('every scheme round-trips each layer through the codec; the compressing ones send ≤ 1/5 of float32', async () => {
    const layers = layerGradients(layout, await realGradient());
    const float32 = denseBytes(layout);
    expect(float32).toBeGreaterThan(4_000_000);
    for (const scheme of SCHEME_NAMES) {
      const compressed = compressOnCpu(layers, compressionOf(scheme), (layer) => ({
        seed: 1,
        worker: 0,
        round: 0,
        layer,
      }));
      let sent = 0;
      compressed.forEach(({ sample }, l) => {
        const bytes = encodeLayer(sample, l);
        expect(bytes.length, `${scheme} layer ${l}`).toBe(encodedByteLength(sample));
        const decoded = decodeLayer(bytes);
        expect(decoded.layer).toBe(l);
        expect(differences(reconstruct(decoded.sample), reconstruct(sample)), `${scheme} layer ${l}`).toBe(0);
        // What travels: the sample, or the layer as float32 where that is smaller.
        sent += encodeForWire(sample, l).length;
      });
      if (scheme === 'none') expect(sent).toBe(float32);
      else expect(sent, scheme).toBeLessThan(float32 / 5);
    }
  });
});
