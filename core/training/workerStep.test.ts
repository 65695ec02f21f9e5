import { describe, expect, it } from 'vitest';
import { reconstruct } from '../atomo';
import { decodeLayer } from '../codec';
import { Dataset } from '../data';
import { createCpuBackend } from '../model/cpu/backend';
import { heInitialize } from '../model/init';
import { mlpLayout } from '../model/layout';
import { decodeWeights, encodeWeights } from './modelCodec';
import { createWorkerStep } from './workerStep';

const layout = mlpLayout({ inputSize: 784, hiddenSize: 16, classCount: 10 });
const count = 64;
const train = new Dataset(
  Uint8Array.from({ length: count * 784 }, (_, i) => (i * 37) % 256),
  Uint8Array.from({ length: count }, (_, i) => i % 10),
);
const shard = Uint32Array.from({ length: count }, (_, i) => i);

describe('workerStep', () => {
  for (const scheme of ['none', 'atomo-svd', 'terngrad'] as const) {
    it(`encodes one decodable layer per tensor with exact bytes and consistent statistics (${scheme})`, async () => {
      const make = () =>
        createWorkerStep({ backend: createCpuBackend(layout), layout, compression: { scheme, budget: 2, levels: 1 }, batchSize: 8, seed: 5, worker: 2, train, shard });
      const weights = heInitialize(layout, 5);
      const result = await make()(weights, 3);
      expect(result.layers).toHaveLength(layout.tensors.length);
      expect(result.bytes).toBe(result.layers.reduce((sum, l) => sum + l.length, 0));
      expect(result.loss).toBeGreaterThan(0);
      layout.tensors.forEach((tensor, layer) => {
        const { sample } = decodeLayer(result.layers[layer]!, { expectedLayer: layer, expectedShape: tensor.shape });
        expect(sample.scheme).toBe(scheme);
        expect(reconstruct(sample)).toHaveLength(tensor.size);
        const stats = result.layerStats[layer]!;
        if (scheme === 'none') expect(stats.realised).toBe(0);
        expect(stats.gradientNormSq).toBeGreaterThanOrEqual(0);
      });
      // Same inputs, same bytes: a gradient is reproducible from (seed, slot, version).
      const again = await make()(weights, 3);
      expect(again.layers).toEqual(result.layers);
    });
  }

  it('round-trips weights through the model codec', () => {
    const weights = heInitialize(layout, 9);
    expect(decodeWeights(layout, encodeWeights(layout, weights))).toEqual(weights);
  });
});
