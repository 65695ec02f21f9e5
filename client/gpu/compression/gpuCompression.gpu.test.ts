/**
 * GPU compression against its specification (docs/design.md, core/atomo):
 *  - the GPU SVD (factored route for the 784×128 layer, direct for the rest)
 *    of real MLP layer gradients reconstructs them to 1e-4 relative;
 *  - over 1,000 seeds each scheme's decoded GPU estimate has mean within 5
 *    standard errors of the true gradient, entry by entry, and its realised
 *    error ‖ĝ − g‖² has mean within 5 standard errors of the closed form;
 *  - QSGD and TernGrad draw exactly what the CPU scheme draws on the same stream;
 *  - entry-wise ATOMO sends every non-zero entry exactly where s ≥ #non-zero,
 *    its closed form is Σ g²(1/p − 1) of the p it used, and its samples
 *    survive core/codec unchanged (its water-filling: entry.gpu.test.ts);
 *  - Fourier ATOMO on the device reports the CPU scheme's closed form and
 *    ‖g‖² (Parseval), sends small layers exactly, and is unbiased.
 * The Monte-Carlo runs on a small MLP (20-12-5, batch 3: the first layer still
 * takes the factored route) so 1,000 draws take seconds on SwiftShader.
 */
import { describe, expect } from 'vitest';
import { SCHEMES, atomicVariance, reconstruct } from '../../../core/atomo';
import { QSGD_CODINGS, type LayerSample } from '../../../core/atomo/types';
import { decodeLayer, encodeLayer } from '../../../core/codec';
import { createModelLayout, mlpLayout, type ModelLayout } from '../../../core/model/layout';
import { randomImages, randomLabels, randomParameters } from '../../../core/model/testing/fixtures';
import type { StreamId } from '../../../core/rng';
import type { CompressedLayerStats } from '../../../core/training/compression';
import { gpuTest } from '../testing/gpuTest';
import { createGpuBackend, type GpuGradient } from '../training/gpuBackend';
import { GpuEntryCompressor } from './entryCompressor';
import { createTensorCompressor } from './gpuCompressor';
import { GpuQuantiser } from './quantiser';
import { GpuSpectralCompressor } from './spectralCompressor';
import type { DeviceGradient } from './tensors';

const SEEDS = 1000;
const streamOf =
  (round: number) =>
  (layer: number): StreamId => ({ seed: 77, worker: 2, round, layer });

async function gradientOn(
  device: GPUDevice,
  layout: ModelLayout,
  batch: number,
): Promise<{ g: Float32Array; gpuGradient: GpuGradient; destroy: () => void }> {
  const backend = createGpuBackend(device, layout);
  const params = randomParameters(layout, 3);
  const images = randomImages(batch, layout.inputSize, 4);
  const labels = randomLabels(batch, layout.classCount, 5);
  const g = (await backend.lossAndGradient(params, images, labels, batch)).gradient.slice();
  // Same inputs again: the gradient stays on the device for the compressor.
  const gpuGradient = backend.computeGradient(params, images, labels, batch);
  return { g, gpuGradient, destroy: () => backend.destroy() };
}

/** Accumulates decoded estimates and realised errors over draws, then checks both against 5 standard errors. */
class MonteCarlo {
  readonly #sum: Float64Array;
  readonly #sumSq: Float64Array;
  readonly #realised: number[][];
  /** Per-entry variance known in closed form (entry-wise schemes): rare events make the sample variance 0. */
  readonly #knownVariance: Float64Array;
  #closed: number[] = [];
  #draws = 0;

  /** `entryProbabilities`: the p of entry-wise ATOMO, laid out like g (its per-entry variance g²(1/p − 1)). */
  constructor(
    readonly layout: ModelLayout,
    readonly g: Float32Array,
    readonly entryProbabilities?: Float32Array,
  ) {
    this.#sum = new Float64Array(g.length);
    this.#sumSq = new Float64Array(g.length);
    this.#realised = layout.tensors.map(() => []);
    this.#knownVariance = new Float64Array(g.length);
  }

  add(layers: readonly CompressedLayerStats[]): void {
    this.#draws++;
    this.#closed = layers.map((layer) => layer.closedForm);
    this.layout.tensors.forEach((tensor, index) => {
      const layer = layers[index]!;
      this.#noteVariance(layer.sample, tensor.offset);
      // Through the wire format, as the aggregator sees it.
      const decoded = decodeLayer(encodeLayer(layer.sample, index)).sample;
      const estimate = reconstruct(decoded);
      let realised = 0;
      for (let i = 0; i < tensor.size; i++) {
        const value = estimate[i]!;
        this.#sum[tensor.offset + i]! += value;
        this.#sumSq[tensor.offset + i]! += value * value;
        realised += (value - this.g[tensor.offset + i]!) ** 2;
      }
      // The statistic the worker reports is the realised error of what it sends.
      expect(Math.abs(layer.realised - realised)).toBeLessThanOrEqual(1e-4 * realised + 1e-9);
      this.#realised[index]!.push(realised);
    });
  }

  #noteVariance(sample: LayerSample, offset: number): void {
    const g = this.g;
    const n = sample.shape[0] * sample.shape[1];
    for (let i = 0; i < n; i++) {
      const magnitude = Math.abs(g[offset + i]!);
      if (sample.scheme === 'terngrad') this.#knownVariance[offset + i] = magnitude * (sample.scaler - magnitude);
      const p = this.entryProbabilities?.[offset + i] ?? 0;
      if (sample.scheme === 'atomo-entry' && p > 0)
        this.#knownVariance[offset + i] = magnitude * magnitude * (1 / p - 1);
      if (sample.scheme === 'qsgd' && sample.norms[0]! > 0) {
        // The GPU quantises with one bucket per layer.
        const norm = sample.norms[0]!;
        const position = (sample.levels * magnitude) / norm;
        const fraction = position - Math.floor(position);
        this.#knownVariance[offset + i] = (norm / sample.levels) ** 2 * fraction * (1 - fraction);
      }
    }
  }

  /** Adds `draws` draws, round 0, 1, …, then checks. */
  async run(draw: (round: number) => Promise<readonly CompressedLayerStats[]>, draws = SEEDS): Promise<void> {
    for (let round = 0; round < draws; round++) this.add(await draw(round));
    this.check();
  }

  check(): void {
    const n = this.#draws;
    let scale = 0;
    for (const value of this.g) scale = Math.max(scale, Math.abs(value));
    for (let i = 0; i < this.g.length; i++) {
      const mean = this.#sum[i]! / n;
      const variance = Math.max(this.#sumSq[i]! / n - mean * mean, this.#knownVariance[i]!);
      const standardError = Math.sqrt(variance / n);
      expect(Math.abs(mean - this.g[i]!), `entry ${i}`).toBeLessThanOrEqual(5 * standardError + 1e-5 * scale);
    }
    this.layout.tensors.forEach((tensor, index) => {
      const values = this.#realised[index]!;
      const mean = values.reduce((a, b) => a + b, 0) / n;
      const variance = values.reduce((a, b) => a + (b - mean) ** 2, 0) / n;
      const closed = this.#closed[index]!;
      expect(Math.abs(mean - closed), tensor.name).toBeLessThanOrEqual(
        5 * Math.sqrt(variance / n) + 1e-4 * closed + 1e-12,
      );
    });
  }
}

const small = mlpLayout({ inputSize: 20, hiddenSize: 12, classCount: 5 });
/** The small model's gradient on the device, drawing from round `round`'s streams. */
const smallInput =
  (gradient: GpuGradient) =>
  (round: number): DeviceGradient => ({ tensors: small.tensors, gradient, stream: streamOf(round) });
const SMALL_BATCH = 3;

describe.each(['device', 'host'] as const)('GPU spectral ATOMO, core SVD on the %s', (core) => {
  gpuTest('the GPU SVD of the MLP layer gradients (batch 32) reconstructs them to 1e-4 relative', async ({ gpu }) => {
    const layout = createModelLayout('mlp');
    const { g, gpuGradient, destroy } = await gradientOn(gpu.device, layout, 32);
    const spectral = new GpuSpectralCompressor(gpu.device, { core });
    try {
      const decomposition = await spectral.decompose(layout.tensors, gpuGradient);
      const triplets = await spectral.readDecomposition(decomposition);
      layout.tensors.forEach((tensor, index) => {
        const { k, u, sigma, v } = triplets[index]!;
        const [rows, cols] = tensor.shape;
        if (tensor.name === 'dense1.weight') expect(k).toBe(32); // the factored route: rank ≤ batch
        let diff = 0;
        let norm = 0;
        for (let i = 0; i < rows; i++) {
          for (let j = 0; j < cols; j++) {
            let value = 0;
            for (let t = 0; t < k; t++) value += sigma[t]! * u[t * rows + i]! * v[t * cols + j]!;
            const want = g[tensor.offset + i * cols + j]!;
            diff += (value - want) ** 2;
            norm += want * want;
          }
        }
        expect(Math.sqrt(diff / norm), tensor.name).toBeLessThan(1e-4);
        for (let t = 1; t < k; t++) expect(sigma[t]!).toBeLessThanOrEqual(sigma[t - 1]!);
      });
    } finally {
      spectral.destroy();
      destroy();
    }
  });
});

// The core's side changes σ and the vectors by rounding only, and the sampling is the same code: one Monte-Carlo run.
describe('GPU spectral ATOMO, sampling', () => {
  gpuTest(`is unbiased over ${SEEDS} seeds, with realised error matching the closed form`, async ({ gpu }) => {
    const { g, gpuGradient, destroy } = await gradientOn(gpu.device, small, SMALL_BATCH);
    const spectral = new GpuSpectralCompressor(gpu.device, { core: 'device' });
    try {
      const decomposition = await spectral.decompose(small.tensors, gpuGradient);
      await new MonteCarlo(small, g).run((round) => spectral.sample(decomposition, 1.5, streamOf(round)));
    } finally {
      spectral.destroy();
      destroy();
    }
  });
});

describe.each(['qsgd', 'terngrad'] as const)('GPU %s', (scheme) => {
  gpuTest(`draws what the CPU scheme draws, and is unbiased over ${SEEDS} seeds`, async ({ gpu }) => {
    const { g, gpuGradient, destroy } = await gradientOn(gpu.device, small, SMALL_BATCH);
    const quantiser = new GpuQuantiser(gpu.device, scheme);
    const levels = scheme === 'qsgd' ? 2 : 1;
    try {
      // Same stream, same draws: the GPU sample equals the CPU scheme's, and so do its bytes, in either QSGD coding
      // (the Elias one is written on the host from the levels read back).
      for (const qsgdCoding of QSGD_CODINGS) {
        const first = await quantiser.compress(smallInput(gpuGradient)(0), levels, qsgdCoding);
        small.tensors.forEach((tensor, index) => {
          const want = SCHEMES[scheme].compress(
            g.subarray(tensor.offset, tensor.offset + tensor.size),
            tensor.shape,
            { levels, qsgdCoding },
            streamOf(0)(index),
          );
          const got: LayerSample = first.layers[index]!.sample;
          expect(got).toEqual(want.sample);
          expect(encodeLayer(got, index)).toEqual(encodeLayer(want.sample, index));
          expect(first.layers[index]!.closedForm).toBeCloseTo(want.variance, 6);
        });
      }
      await new MonteCarlo(small, g).run(
        async (round) => (await quantiser.compress(smallInput(gpuGradient)(round), levels)).layers,
      );
    } finally {
      quantiser.destroy();
      destroy();
    }
  });
});

describe('GPU atomo-entry', () => {
  gpuTest(`sends exact entries where s ≥ #non-zero, decodes, is unbiased over ${SEEDS} seeds`, async ({ gpu }) => {
    const { g, gpuGradient, destroy } = await gradientOn(gpu.device, small, SMALL_BATCH);
    const entry = new GpuEntryCompressor(gpu.device);
    // s = 20: the 20×12 and 12×5 weights are sampled, the biases (12, 5) sent whole.
    const budget = 20;
    try {
      const used = await entry.readProbabilities(small.tensors, gpuGradient.buffer, budget);
      const p = new Float32Array(g.length);
      small.tensors.forEach((tensor, index) => p.set(used[index]!.probabilities, tensor.offset));
      const first = await entry.compress(smallInput(gpuGradient)(0), budget);
      // The worker's DeviceCompressor takes atomo-entry now, and draws the same from the same stream.
      const compressor = createTensorCompressor(gpu.device, small.tensors, { spectral: 'device' });
      try {
        const compression = { scheme: 'atomo-entry', budget, levels: 1 } as const;
        expect(compressor.supports(compression)).toBe(true);
        const again = await compressor.compress(gpuGradient, compression, streamOf(0));
        expect(again.layers.map((layer) => layer.sample)).toEqual(first.layers.map((layer) => layer.sample));
        expect(again.loss).toBe(first.loss);
      } finally {
        compressor.destroy();
      }
      small.tensors.forEach((tensor, index) => {
        const layer = first.layers[index]!;
        const g32 = g.subarray(tensor.offset, tensor.offset + tensor.size);
        expect(decodeLayer(encodeLayer(layer.sample, index)).sample, tensor.name).toEqual(layer.sample);
        expect(layer.closedForm, tensor.name).toBeCloseTo(
          atomicVariance(g32, p.subarray(tensor.offset, tensor.offset + tensor.size)),
          6,
        );
        let normSq = 0;
        for (const value of g32) normSq += value * value;
        expect(layer.gradientNormSq / normSq, tensor.name).toBeCloseTo(1, 5);
        if (layer.sample.scheme !== 'atomo-entry') throw new Error(`${tensor.name}: ${layer.sample.scheme} sample`);
        if (tensor.size <= budget) {
          const nonZero = [...g32.keys()].filter((i) => g32[i] !== 0);
          expect([...layer.sample.indices], tensor.name).toEqual(nonZero);
          expect([...layer.sample.values], tensor.name).toEqual(nonZero.map((i) => g32[i]!));
          expect(layer.realised, tensor.name).toBe(0);
        }
      });
      await new MonteCarlo(small, g, p).run(
        async (round) => (await entry.compress(smallInput(gpuGradient)(round), budget)).layers,
      );
    } finally {
      entry.destroy();
      destroy();
    }
  });
});

/**
 * Draws of the Fourier test: each reconstructs through the CPU's inverse DCT, so fewer than SEEDS (the 5σ bounds widen
 * to match).
 */
const DCT_DRAWS = 300;

describe('GPU atomo-dct', () => {
  gpuTest(
    `sends coefficients the CPU scheme would, is exact where s ≥ #coefficients, and unbiased over ${DCT_DRAWS} seeds`,
    async ({ gpu }) => {
      const { g, gpuGradient, destroy } = await gradientOn(gpu.device, small, SMALL_BATCH);
      const compressor = createTensorCompressor(gpu.device, small.tensors, { dct: 'device' });
      // s = 20: the 20×12 and 12×5 weights' coefficients are sampled, the biases' (12, 5) sent whole.
      const compression = { scheme: 'atomo-dct', budget: 20, levels: 1 } as const;
      try {
        expect(compressor.supports(compression)).toBe(true);
        expect(createTensorCompressor(gpu.device, small.tensors).supports(compression)).toBe(false);
        const first = await compressor.compress(gpuGradient, compression, streamOf(0));
        small.tensors.forEach((tensor, index) => {
          const layer = first.layers[index]!;
          const g32 = g.subarray(tensor.offset, tensor.offset + tensor.size);
          // The CPU scheme's closed form and ‖g‖² on the same gradient (Parseval: ‖C‖ = ‖G‖).
          const want = SCHEMES['atomo-dct'].compress(
            g32,
            tensor.shape,
            { budget: compression.budget },
            streamOf(0)(index),
          );
          expect(layer.sample.scheme, tensor.name).toBe('atomo-dct');
          expect(decodeLayer(encodeLayer(layer.sample, index)).sample, tensor.name).toEqual(layer.sample);
          expect(Math.abs(layer.closedForm - want.variance), tensor.name).toBeLessThanOrEqual(
            1e-4 * want.variance + 1e-12,
          );
          let normSq = 0;
          for (const value of g32) normSq += value * value;
          expect(layer.gradientNormSq / normSq, tensor.name).toBeCloseTo(1, 5);
          if (tensor.size <= compression.budget) {
            // Every coefficient sent as itself: the estimate is the gradient, to the DCT's f32 rounding.
            expect(layer.realised, tensor.name).toBe(0);
            const estimate = reconstruct(layer.sample);
            for (let i = 0; i < tensor.size; i++)
              expect(Math.abs(estimate[i]! - g32[i]!), tensor.name).toBeLessThanOrEqual(1e-5 * Math.sqrt(normSq));
          }
        });
        await new MonteCarlo(small, g).run(
          async (round) => (await compressor.compress(gpuGradient, compression, streamOf(round))).layers,
          DCT_DRAWS,
        );
      } finally {
        compressor.destroy();
        destroy();
      }
    },
  );
});
