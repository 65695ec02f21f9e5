/**
 * The one worker round on the CPU backend, for every scheme: what it sends is
 * exactly the core scheme's sample of the backend's gradient of round v's
 * minibatch on stream {seed, worker, v, layer}, encoded; its statistics are
 * those of that sample; the same inputs give the same bytes.
 */
import { describe, expect, it } from 'vitest';
import { SCHEMES, SCHEME_NAMES, realisedError, reconstruct, spectralRouteOf, squaredNorm } from '../atomo';
import { decodeLayer, encodeForWire, encodeLayer } from '../codec';
import { Dataset, MinibatchSampler } from '../data';
import { createCpuBackend } from '../model/cpu/backend';
import { heInitialise } from '../model/init';
import { mlpLayout } from '../model/layout';
import { compressByBytes } from '../atomo/compressByBytes';
import { layerGradients } from './compression';
import { decodeWeights, encodeWeights } from './modelCodec';
import { INDICATOR_EVERY, WALL_CLOCK, createWorkerRound } from './workerRound';
import { nuclearNorm, spectralIndicator } from '../atomo/indicator';
import type { Compression } from '../atomo/types';

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
      // atomo-auto needs a byte budget for the whole model, which the worker splits across its layers.
      const compression = { scheme, budget: 2, levels: 3, ...(scheme === 'atomo-auto' ? { byteBudget: 3000 } : {}) };
      const make = () =>
        createWorkerRound({
          backend: createCpuBackend(layout),
          layout,
          compression,
          batchSize,
          seed,
          worker,
          train,
          shard,
        });
      const weights = heInitialise(layout, 5);
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
      const gradients = layerGradients(layout, expected);
      const split =
        scheme === 'atomo-auto'
          ? compressByBytes(
              scheme,
              gradients.map(({ values, shape, factors }) => ({ grad: values, shape, factors })),
              3000,
              (layer) => ({ seed, worker, round: version, layer }),
            )
          : null;
      if (split !== null) expect(split.reduce((sum, l) => sum + l.plan.point.bytes, 0)).toBeCloseTo(3000, 0);
      for (const { layer, shape, values, factors } of gradients) {
        const own =
          split === null
            ? SCHEMES[scheme].compress(values, shape, compression, { seed, worker, round: version, layer }, factors)
            : null;
        const { sample, variance } = split?.[layer] ?? own!;
        expect(result.layers[layer]).toEqual(encodeForWire(sample, layer));
        const decoded = decodeLayer(result.layers[layer]!, { expectedLayer: layer, expectedShape: shape }).sample;
        // A layer whose scheme bytes would exceed float32 goes dense (same estimate).
        expect(decoded.scheme).toBe(
          encodeLayer(sample, layer).length > encodeForWire(sample, layer).length ? 'none' : sample.scheme,
        );
        const stats = result.layerStats[layer]!;
        expect(stats.closedForm).toBe(variance);
        // ‖g‖² as the scheme found it (spectral ATOMO's factored route: of the factors' product, from its SVD), else
        // summed.
        expect(stats.gradientNormSq).toBe(own?.gradientNorms?.normSq ?? squaredNorm(values));
        expect(Math.abs(stats.gradientNormSq - squaredNorm(values))).toBeLessThanOrEqual(1e-6 * squaredNorm(values));
        // Fourier and spectral ATOMO measure their error in coefficient space (Parseval), before the atoms are rounded
        // to float32.
        const realised = realisedError(reconstruct(decoded), values);
        expect(Math.abs(stats.realised - realised)).toBeLessThanOrEqual(1e-6 * realised + 1e-12 * stats.gradientNormSq);
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

  it(
    'reports each layer’s indicator every round where the compression found both its norms, ' +
      'else every INDICATOR_EVERY rounds',
    async () => {
      const weights = heInitialise(layout, 5);
      const roundOf = (compression: Compression) =>
        createWorkerRound({
          backend: createCpuBackend(layout),
          layout,
          compression,
          batchSize,
          seed,
          worker,
          train,
          shard,
        });
      const batch = train.batch(new MinibatchSampler(shard, batchSize, seed, worker).batch(INDICATOR_EVERY));
      const gradients = layerGradients(
        layout,
        await createCpuBackend(layout).lossAndGradient(weights, batch.pixels, batch.labels, batchSize),
      );
      for (const compression of [
        { scheme: 'atomo-svd', budget: 2, levels: 1 },
        { scheme: 'atomo-auto', budget: 0, levels: 1, byteBudget: 3000 },
        { scheme: 'qsgd', budget: 0, levels: 3 },
      ] as const) {
        // Spectral ATOMO and atomo-auto have ‖G‖_* on every layer, and ‖g‖₁ wherever g is read: everywhere but on
        // spectral
        // ATOMO's factored route.
        const factored = (layer: number) =>
          spectralRouteOf(gradients[layer]!.shape, gradients[layer]!.factors) === 'factored';
        const everyRound = (layer: number) =>
          compression.scheme === 'atomo-auto' || (compression.scheme === 'atomo-svd' && !factored(layer));
        // Both kinds of layer are here: factored weights and biases.
        expect(new Set(gradients.map((_, layer) => factored(layer)))).toEqual(new Set([true, false]));
        for (const version of [INDICATOR_EVERY, INDICATOR_EVERY + 1]) {
          const { layerStats } = await roundOf(compression)(weights, version);
          const measured = (layer: number) => everyRound(layer) || version % INDICATOR_EVERY === 0;
          for (const { layer, shape, values, factors } of version === INDICATOR_EVERY ? gradients : []) {
            expect(layerStats[layer]!.indicator, `${compression.scheme} layer ${layer}`).toBeCloseTo(
              spectralIndicator(nuclearNorm(values, shape, factors), values, shape)!,
              6,
            );
          }
          expect(
            layerStats.map((s) => s.indicator !== undefined),
            `${compression.scheme} v${version}`,
          ).toEqual(layerStats.map((_, layer) => measured(layer)));
        }
      }
    },
  );

  it('splits a byte budget through error feedback: later rounds send g + e, and the bytes stay on budget', async () => {
    const compression = { scheme: 'atomo-entry', budget: 0, levels: 1, byteBudget: 2500, errorFeedback: true } as const;
    const make = (errorFeedback: boolean) =>
      createWorkerRound({
        backend: createCpuBackend(layout),
        layout,
        compression: { ...compression, errorFeedback },
        batchSize,
        seed,
        worker,
        train,
        shard,
      });
    const [round, plain] = [make(true), make(false)];
    const weights = heInitialise(layout, 5);
    let bytes = 0;
    for (let v = 0; v < 6; v++) {
      const [result, without] = [await round(weights, v), await plain(weights, v)];
      bytes += result.bytes;
      // Round 0 has no memory yet; from then on the unsent error joins the gradient, so the messages differ.
      if (v === 0) expect(result.layers).toEqual(without.layers);
      else expect(result.layers).not.toEqual(without.layers);
      // Biased: the variance reported is the realised error against this round's own gradient.
      for (const stats of result.layerStats) expect(stats.closedForm).toBe(stats.realised);
    }
    // Six rounds of a budget spent in expectation: within a tenth (the draws vary round to round).
    expect(Math.abs(bytes / 6 - 2500)).toBeLessThan(250);
  });

  it('times compute, compression and encoding on the clock it is given, and says which', async () => {
    const options = { backend: createCpuBackend(layout), layout, batchSize, seed, worker, train, shard };
    const compression = { scheme: 'atomo-svd', budget: 2, levels: 3 } as const;
    // A fake thread CPU clock read at the round's start, after the gradient, after compression and after encoding.
    const readings = [100, 110, 113, 113.5];
    let reads = 0;
    const clock = { now: () => readings[reads++]!, source: 'thread-cpu' as const };
    const timed = await createWorkerRound({ ...options, compression, clock })(heInitialise(layout, 5), version);
    expect(reads).toBe(4);
    expect([timed.computeMs, timed.compressMs, timed.encodeMs, timed.clock]).toEqual([10, 3, 0.5, 'thread-cpu']);
    // Without one: the wall clock, and it says so.
    const wall = await createWorkerRound({ ...options, compression })(heInitialise(layout, 5), version);
    expect(wall.clock).toBe('wall');
    expect(WALL_CLOCK.source).toBe('wall');
    expect(wall.computeMs).toBeGreaterThanOrEqual(0);
    expect(wall.bytes).toBe(timed.bytes);
  });

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
    const weights = heInitialise(layout, 9);
    expect(decodeWeights(layout, encodeWeights(layout, weights))).toEqual(weights);
  });
});
