/**
 * The one worker round on the CPU backend, for every scheme: what it sends is
 * exactly the core scheme's sample of the backend's gradient of round v's
 * minibatch on stream {seed, worker, v, layer}, encoded; its statistics are
 * those of that sample; the same inputs give the same bytes.
 */
import { describe, expect, it } from 'vitest';
import { SCHEMES, SCHEME_NAMES, realisedError, reconstruct, squaredNorm } from '../atomo';
import { decodeLayer, encodeForWire, encodeLayer } from '../codec';
import { Dataset, MinibatchSampler } from '../data';
import { createCpuBackend } from '../model/cpu/backend';
import { heInitialize } from '../model/init';
import { mlpLayout } from '../model/layout';
import { layerGradients } from './compression';
import { decodeWeights, encodeWeights } from './modelCodec';
import { createWorkerRound } from './workerRound';

const layout = mlpLayout({ inputSize: 784, hiddenSize: 16, classCount: 10 });
const count = 64;
const train = new Dataset(
  Uint8Array.from({ length: count * 784 }, (_, i) => (i * 37) % 256),
  Uint8Array.from({ length: count }, (_, i) => i % 10),
);
const shard = Uint32Array.from({ length: count / 2 }, (_, i) => 2 * i + 1);
const [batchSize, seed, worker, version] = [8, 5, 2, 3];

describe('worker round (CPU)', () => {
  for (const scheme of SCHEME_NAMES) {
    it(`sends the ${scheme} sample of round v's gradient on the round's streams, with its statistics`, async () => {
      const compression = { scheme, budget: 2, levels: 3 };
      const make = () => createWorkerRound({ backend: createCpuBackend(layout), layout, compression, batchSize, seed, worker, train, shard });
      const weights = heInitialize(layout, 5);
      const result = await make()(weights, version);

      // The reference, computed step by step: round v's minibatch, its gradient, each layer's scheme draw.
      const batch = train.batch(new MinibatchSampler(shard, batchSize, seed, worker).batch(version));
      const expected = await createCpuBackend(layout).lossAndGradient(weights, batch.pixels, batch.labels, batchSize);
      expect(result.loss).toBe(expected.loss);
      expect(result.compressedOn).toBe('cpu');
      expect(result.version).toBe(version);
      let normSq = 0;
      // Dense weights come with their factors X, Δ (spectral ATOMO decomposes those, so the bytes differ without them).
      expect(expected.factors?.size).toBe(layout.layers.filter((l) => l.type === 'dense').length);
      for (const { layer, shape, values, factors } of layerGradients(layout, expected)) {
        const { sample, variance } = SCHEMES[scheme].compress(values, shape, compression, { seed, worker, round: version, layer }, factors);
        expect(result.layers[layer]).toEqual(encodeForWire(sample, layer));
        const decoded = decodeLayer(result.layers[layer]!, { expectedLayer: layer, expectedShape: shape }).sample;
        // A layer whose scheme bytes would exceed float32 goes dense (same estimate).
        expect(decoded.scheme).toBe(encodeLayer(sample, layer).length > encodeForWire(sample, layer).length ? 'none' : scheme);
        const stats = result.layerStats[layer]!;
        expect(stats.closedForm).toBe(variance);
        expect(stats.gradientNormSq).toBe(squaredNorm(values));
        expect(stats.realised).toBeCloseTo(realisedError(reconstruct(decoded), values), 12);
        if (scheme === 'none') expect(stats.realised).toBe(0);
        normSq += stats.gradientNormSq;
      }
      expect(result.layers).toHaveLength(layout.tensors.length);
      expect(result.bytes).toBe(result.layers.reduce((sum, l) => sum + l.length, 0));
      expect(result.gradientNormSq).toBeCloseTo(normSq, 12);

      // Same inputs, same bytes: a gradient is reproducible from (seed, slot, version); another version draws anew.
      expect((await make()(weights, version)).layers).toEqual(result.layers);
      expect((await make()(weights, version + 1)).loss).not.toBe(result.loss);
    });
  }

  it('refuses weights of another model', async () => {
    const round = createWorkerRound({
      backend: createCpuBackend(layout),
      layout,
      compression: { scheme: 'none', budget: 2, levels: 1 },
      batchSize,
      seed,
      worker,
      train,
      shard,
    });
    await expect(round(new Float32Array(layout.parameterCount - 1), 0)).rejects.toThrow(/weights/);
  });

  it('round-trips weights through the model codec', () => {
    const weights = heInitialize(layout, 9);
    expect(decodeWeights(layout, encodeWeights(layout, weights))).toEqual(weights);
  });
});
