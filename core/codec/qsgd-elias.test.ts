/**
 * QSGD's Elias coding against its fixed-width one: the same draws decode to
 * the same estimate bit for bit (so the Monte-Carlo checks of the estimator
 * hold for both), and at 1 and 4 levels in buckets of 512 the Elias bytes are
 * fewer, on a Gaussian layer and on an MLP's real gradient (the factor is
 * printed; docs/wire-format.md, "qsgd-elias"). The expected bytes of
 * sizes.ts's Gaussian model are checked against the encoded Gaussian layer.
 */
import { describe, expect, it } from 'vitest';
import { reconstruct } from '../atomo/reconstruct';
import { qsgdScheme } from '../atomo/schemes/qsgd';
import type { QsgdCoding, QsgdSample, Shape } from '../atomo/types';
import { randomMatrix } from '../linalg/random-matrix';
import { createCpuBackend } from '../model/cpu/backend';
import { heInitialise } from '../model/init';
import { createModelLayout } from '../model/layout';
import { randomImages, randomLabels } from '../model/testing/fixtures';
import type { StreamId } from '../rng';
import { decodeLayer, encodeLayer } from './index';
import { expectedLayerBytes } from './sizes';

const SHAPE: Shape = [784, 128];

/** A 784×128 layer of i.i.d. standard Gaussians (float32), seeded. */
function gaussianLayer(seed: number): Float32Array {
  return Float32Array.from(randomMatrix(SHAPE[0], SHAPE[1], seed));
}

/** The MLP's first-layer gradient (784×128) on a batch of 32 fixture digits, half their pixels 0 as in MNIST. */
async function mlpGradient(): Promise<Float32Array> {
  const layout = createModelLayout('mlp');
  const backend = createCpuBackend(layout);
  const images = randomImages(32, layout.inputSize, 11);
  const labels = randomLabels(32, layout.classCount, 12);
  const { gradient } = await backend.lossAndGradient(heInitialise(layout, 1), images, labels, 32);
  const first = layout.tensors[0]!;
  expect(first.shape).toEqual(SHAPE);
  return gradient.slice(first.offset, first.offset + first.size);
}

function compress(grad: Float32Array, shape: Shape, levels: number, coding: QsgdCoding, stream: StreamId): QsgdSample {
  return qsgdScheme.compress(grad, shape, { levels, bucketSize: 512, qsgdCoding: coding }, stream).sample;
}

/** ĝ as received from the bytes of `sample`, −0 read as +0 (the Elias coding sends no sign for a level 0). */
function received(sample: QsgdSample): number[] {
  return Array.from(reconstruct(decodeLayer(encodeLayer(sample, 0)).sample), (x) => x + 0);
}

describe('qsgd-elias', () => {
  it('decodes to the fixed coding’s estimate bit for bit, over 200 seeds at several levels and buckets', () => {
    const shape: Shape = [40, 30];
    const grad = Float32Array.from(randomMatrix(40, 30, 5));
    grad[7] = 0;
    grad[100] = 30; // a spike: levels up to s
    for (let seed = 0; seed < 200; seed++) {
      const levels = [1, 2, 3, 4, 7, 15][seed % 6]!;
      const stream = { seed, worker: 1, round: seed, layer: 2 };
      const elias = compress(grad, shape, levels, 'elias', stream);
      const fixed = compress(grad, shape, levels, 'fixed', stream);
      expect(elias.coding).toBe('elias');
      expect(fixed.coding).toBe('fixed');
      // The same draws: the levels are identical, the signs too wherever a level is non-zero.
      expect(elias.level).toEqual(fixed.level);
      expect(elias.norms).toEqual(fixed.norms);
      expect(Array.from(elias.negative)).toEqual(Array.from(fixed.negative, (sign, i) => (fixed.level[i] ? sign : 0)));
      const decoded = decodeLayer(encodeLayer(elias, 0)).sample;
      expect(decoded).toEqual(elias);
      expect(received(elias)).toEqual(received(fixed));
    }
  });

  it('sends fewer bytes than fixed-width QSGD at 1 and 4 levels in buckets of 512', async () => {
    const stream = { seed: 3, worker: 0, round: 0, layer: 0 };
    const layers = { gaussian: gaussianLayer(9), 'MLP 784×128 gradient': await mlpGradient() };
    for (const [name, grad] of Object.entries(layers)) {
      for (const levels of [1, 4]) {
        const elias = encodeLayer(compress(grad, SHAPE, levels, 'elias', stream), 0).length;
        const fixed = encodeLayer(compress(grad, SHAPE, levels, 'fixed', stream), 0).length;
        const factor = fixed / elias;
        console.log(`qsgd s=${levels} d=512, ${name}: fixed ${fixed} B, elias ${elias} B, ${factor.toFixed(2)}× fewer`);
        expect(elias, `${name} s=${levels}`).toBeLessThan(fixed);
        // Far fewer, not just fewer: at most 3 of every 5 fixed-width bytes even at s = 4.
        expect(factor, `${name} s=${levels}`).toBeGreaterThan(5 / 3);
      }
    }
  });

  it('expects the Elias bytes of a Gaussian layer within 1% of the encoded ones, averaged over 8 draws', () => {
    for (const levels of [1, 3, 4, 15]) {
      let total = 0;
      const draws = 8;
      for (let seed = 0; seed < draws; seed++) {
        const stream = { seed, worker: 0, round: 0, layer: 0 };
        total += encodeLayer(compress(gaussianLayer(100 + seed), SHAPE, levels, 'elias', stream), 0).length;
      }
      const expected = expectedLayerBytes(
        { scheme: 'qsgd', budget: 0, levels, bucketSize: 512, qsgdCoding: 'elias' },
        SHAPE,
        32,
      );
      expect(Math.abs(expected - total / draws) / expected, `s=${levels}`).toBeLessThan(0.01);
    }
  });
});
