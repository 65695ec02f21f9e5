/**
 * A byte budget on the GPU (byteBudgetCompressor.ts: DCT and SVD on the
 * device, the split and the draw on the host) against the CPU path
 * (compressOnCpu: every decomposition in float64 on the CPU), on the same
 * float32 gradient and streams.
 *
 * Tolerances, and why:
 *  - A layer built so that one decomposition wins by far (rank one:
 *    spectral; two DCT atoms: DCT; five entries: entry-wise) is sent in the
 *    same decomposition, with the same atoms, as on the CPU: its
 *    coefficients differ by float32 rounding (≈ 1e-6 relative), which moves
 *    τ by as little, and an atom's draw flips only when its Philox uniform
 *    falls within that of its probability (about 1e-6 per atom; these
 *    layers have a few hundred).
 *  - Closed forms (and realised errors of the same atoms) agree to
 *    VARIANCE_TOLERANCE = 1e-5 relative, plus 1e-6·‖g‖²: the curves are the
 *    CPU's on coefficients about 1e-7 apart (relative to the largest), and
 *    V = τS − Q inherits that; measured ≤ 5.5e-7 relative over these cases.
 *    The absolute term covers a layer sent all but exactly, whose closed
 *    form is that rounding noise itself (measured ≤ 0.66·1e-6·‖g‖²).
 *  - Where two decompositions nearly tie (white noise: entries and DCT
 *    coefficients alike), the choice may differ, but the split minimises
 *    the summed variance, and the minimum moves continuously with the
 *    coefficients: Σ V of the device route is within VARIANCE_TOLERANCE of
 *    the CPU's (measured ≤ 2.3e-7; the choices agreed in these cases).
 *  - Unbiasedness and bytes: 400 draws (rounds 0…399 of a fixed seed), each
 *    linear functional ⟨ĝ, w⟩ (w = g and two random directions per layer)
 *    has its mean within 5 standard errors of ⟨g, w⟩ (plus 1e-5 relative:
 *    the float32 device SVD reconstructs g to about 1e-6), the mean
 *    realised error within 5 standard errors of the closed form (plus
 *    1e-6·‖g‖²: a layer sent all but exactly, such as two DCT atoms, keeps
 *    its float32 rounding noise as atoms of |λ| ≈ 1e-7·‖g‖ whose p is too
 *    small to be drawn in 400 rounds, so their share of the closed form,
 *    below 1e-6·‖g‖², never shows in the sample); the wire bytes are the
 *    CPU path's in all but 1% of the rounds, and their mean is the budget
 *    to 1% (the CPU path's byte model prices code bytes and gap varints in
 *    expectation), plus 5 standard errors.
 */
import { describe, expect } from 'vitest';
import { reconstruct } from '../../../core/atomo';
import type { Compression, LayerSample, Shape } from '../../../core/atomo/types';
import { encodeForWire } from '../../../core/codec';
import { mlpLayout } from '../../../core/model/layout';
import { randomImages, randomLabels, randomParameters } from '../../../core/model/testing/fixtures';
import type { StreamId } from '../../../core/rng';
import { seededRng } from '../../../core/testing/seeded';
import { compressOnCpu, type CompressedLayerStats } from '../../../core/training/compression';
import { readF32, uploadF32 } from '../runtime/readback';
import { gpuTest } from '../testing/gpuTest';
import { createGpuBackend, type GpuGradient } from '../training/gpuBackend';
import { MatmulKernel } from '../kernels/matmul';
import { GpuDctCompressor } from './dctCompressor';
import { createTensorCompressor } from './gpuCompressor';
import { GpuSpectralCompressor } from './spectralCompressor';
import type { GradientTensor } from './tensors';

/** Relative agreement of closed forms and summed variances with the CPU path (see the file comment). */
const VARIANCE_TOLERANCE = 1e-5;

const streamOf =
  (round: number) =>
  (layer: number): StreamId => ({ seed: 91, worker: 3, round, layer });

interface Layer {
  readonly shape: Shape;
  readonly values: Float32Array;
}

/**
 * The layers as one flat gradient on the device (one loss after them), without factors: every SVD takes the direct
 * route.
 */
function onDevice(
  device: GPUDevice,
  layers: readonly Layer[],
): { tensors: GradientTensor[]; gradient: GpuGradient; destroy: () => void } {
  const tensors: GradientTensor[] = [];
  let offset = 0;
  for (const { shape } of layers) {
    tensors.push({ offset, shape });
    offset += shape[0] * shape[1];
  }
  const flat = new Float32Array(offset + 1);
  layers.forEach(({ values }, l) => flat.set(values, tensors[l]!.offset));
  flat[offset] = 0.5;
  const buffer = uploadF32(device, flat, 'ByteBudgetTest.gradient');
  return {
    tensors,
    gradient: { buffer, lossOffset: offset, batch: 1, factors: new Map() },
    destroy: () => buffer.destroy(),
  };
}

function random(n: number, seed: number, scale = 1): Float32Array {
  const rng = seededRng(seed);
  return Float32Array.from({ length: n }, () => (rng() - 0.5) * scale);
}

/** cos(π(2i + 1)k/(2n)): the k-th DCT-II basis vector of length n, unnormalised. */
const cosine = (n: number, k: number) =>
  Float64Array.from({ length: n }, (_, i) => Math.cos((Math.PI * (2 * i + 1) * k) / (2 * n)));

/** Rank one, u vᵀ: one spectral atom sends it exactly, its DCT and its entries are dense. */
function rankOne(rows: number, cols: number, seed: number): Layer {
  const u = random(rows, seed);
  const v = random(cols, seed + 1);
  return {
    shape: [rows, cols],
    values: Float32Array.from({ length: rows * cols }, (_, i) => u[Math.floor(i / cols)]! * v[i % cols]!),
  };
}

/** Two DCT atoms: two coefficients send it, two spectral atoms cost rows + cols floats each. */
function twoCosines(rows: number, cols: number): Layer {
  const [a, b, c, d] = [cosine(rows, 1), cosine(cols, 0), cosine(rows, 0), cosine(cols, 2)];
  return {
    shape: [rows, cols],
    values: Float32Array.from(
      { length: rows * cols },
      (_, i) => a[Math.floor(i / cols)]! * b[i % cols]! + 0.5 * c[Math.floor(i / cols)]! * d[i % cols]!,
    ),
  };
}

/** Five non-zero entries: five entry-wise atoms. */
function fiveEntries(rows: number, cols: number): Layer {
  const values = new Float32Array(rows * cols);
  [7, 130, 333, 801, rows * cols - 1].forEach((i, k) => (values[i] = (k + 1) * (k % 2 === 0 ? 1 : -1)));
  return { shape: [rows, cols], values };
}

/** The decomposition a layer was sent in ('none' for dense). */
function familyOf(sample: LayerSample): string {
  return sample.scheme === 'atomo-auto' ? sample.atoms.scheme : sample.scheme;
}

/** The atom indices a sample kept (entries or DCT coefficients; spectral: the count). */
function keptOf(sample: LayerSample): readonly number[] {
  const atoms = sample.scheme === 'atomo-auto' ? sample.atoms : sample;
  if (atoms.scheme === 'atomo-entry' || atoms.scheme === 'atomo-dct') return [...atoms.indices];
  if (atoms.scheme === 'atomo-svd') return [atoms.count];
  return [];
}

/**
 * What the device's own transforms give for these tensors: every layer's singular triplets and DCT coefficients
 * (float32).
 */
async function deviceTransforms(device: GPUDevice, tensors: readonly GradientTensor[], gradient: GpuGradient) {
  const spectral = new GpuSpectralCompressor(device, { core: 'device' });
  const matmul = new MatmulKernel(device);
  const dct = new GpuDctCompressor(device, matmul);
  try {
    const triplets = await spectral.readDecomposition(await spectral.decompose(tensors, gradient, 'device'));
    const coefficients = await readF32(device, dct.transform(tensors, gradient).buffer, gradient.lossOffset);
    return { triplets, coefficients };
  } finally {
    spectral.destroy();
    dct.destroy();
    matmul.destroy();
  }
}

/**
 * The device route and the CPU path on the same layers, same budget, same streams (and, on request, the device's own
 * transforms).
 */
async function bothRoutes(
  device: GPUDevice,
  layers: readonly Layer[],
  compression: Compression,
  withTransforms = false,
): Promise<{
  gpu: readonly CompressedLayerStats[];
  cpu: readonly CompressedLayerStats[];
  loss: number;
  transforms?: Awaited<ReturnType<typeof deviceTransforms>>;
}> {
  const { tensors, gradient, destroy } = onDevice(device, layers);
  const compressor = createTensorCompressor(device, tensors, { byteBudget: 'device', core: 'device' });
  try {
    expect(compressor.supports(compression)).toBe(true);
    const { loss, layers: gpu } = await compressor.compress(gradient, compression, streamOf(0));
    const cpu = compressOnCpu(
      layers.map(({ shape, values }, layer) => ({ layer, shape, values })),
      compression,
      streamOf(0),
    );
    return {
      gpu,
      cpu,
      loss,
      ...(withTransforms ? { transforms: await deviceTransforms(device, tensors, gradient) } : {}),
    };
  } finally {
    compressor.destroy();
    destroy();
  }
}

const auto = (byteBudget: number): Compression => ({ scheme: 'atomo-auto', budget: 1, levels: 1, byteBudget });

function near(a: number, b: number, relative: number, absolute: number, label: string): void {
  expect(Math.abs(a - b), `${label}: ${a} vs ${b}`).toBeLessThanOrEqual(relative * Math.abs(b) + absolute);
}

describe('a byte budget on the GPU', () => {
  gpuTest(
    'atomo-auto picks the decomposition core picks where one wins clearly, and draws the same atoms',
    async ({ gpu }) => {
      const layers = [
        rankOne(64, 48, 1),
        twoCosines(40, 36),
        fiveEntries(30, 50),
        { shape: [24, 20] as Shape, values: random(480, 5) },
      ];
      const { gpu: onGpu, cpu, loss, transforms } = await bothRoutes(gpu.device, layers, auto(1600), true);
      expect(loss).toBeCloseTo(0.5, 6);
      // The atoms sent are the device's: the rank-one layer's u and v are its SVD's, bit for bit, and the two cosines'
      // values
      // (saturated atoms: λ/p = λ) its DCT coefficients.
      const { triplets, coefficients } = transforms!;
      const spectralAtoms = onGpu[0]!.sample.scheme === 'atomo-auto' ? onGpu[0]!.sample.atoms : null;
      expect(spectralAtoms?.scheme).toBe('atomo-svd');
      if (spectralAtoms?.scheme === 'atomo-svd') {
        expect(spectralAtoms.u).toEqual(triplets[0]!.u.subarray(0, 64));
        expect(spectralAtoms.v).toEqual(triplets[0]!.v.subarray(0, 48));
      }
      const dctAtoms = onGpu[1]!.sample.scheme === 'atomo-auto' ? onGpu[1]!.sample.atoms : null;
      if (dctAtoms?.scheme !== 'atomo-dct') throw new Error('layer 1 was not sent in DCT atoms');
      const dctOffset = 64 * 48;
      const twoLargest = [...dctAtoms.indices].filter((i) => Math.abs(coefficients[dctOffset + i]!) > 1);
      expect(twoLargest).toHaveLength(2);
      for (const i of twoLargest)
        expect(dctAtoms.values[[...dctAtoms.indices].indexOf(i)]).toBe(coefficients[dctOffset + i]);
      const expected = ['atomo-svd', 'atomo-dct', 'atomo-entry'];
      expected.forEach((family, l) => {
        const label = `layer ${l}`;
        expect(familyOf(onGpu[l]!.sample), label).toBe(family);
        expect(familyOf(cpu[l]!.sample), label).toBe(family);
        expect(keptOf(onGpu[l]!.sample), label).toEqual(keptOf(cpu[l]!.sample));
      });
      onGpu.forEach((layer, l) => {
        const normSq = cpu[l]!.gradientNormSq;
        near(layer.gradientNormSq, normSq, 1e-5, 0, `‖g‖² of layer ${l}`);
        near(layer.closedForm, cpu[l]!.closedForm, VARIANCE_TOLERANCE, 1e-6 * normSq, `closed form of layer ${l}`);
        near(layer.realised, cpu[l]!.realised, VARIANCE_TOLERANCE, 1e-6 * normSq, `realised error of layer ${l}`);
      });
      // The noise layer takes a real draw (the budget does not send it exactly).
      expect(cpu[3]!.closedForm).toBeGreaterThan(0);
    },
  );

  gpuTest(
    'at near-ties (white noise: entries and DCT alike) the summed variance is the CPU split’s to 1e-5',
    async ({ gpu }) => {
      const layers = [0, 1, 2, 3].map((k) => ({
        shape: [33 + k, 29 - k] as Shape,
        values: random((33 + k) * (29 - k), 20 + k),
      }));
      for (const budget of [900, 2500, 6000]) {
        const { gpu: onGpu, cpu } = await bothRoutes(gpu.device, layers, auto(budget));
        const total = (stats: readonly CompressedLayerStats[]) => stats.reduce((sum, s) => sum + s.closedForm, 0);
        near(total(onGpu), total(cpu), VARIANCE_TOLERANCE, 0, `Σ V at ${budget} bytes`);
        onGpu.forEach((layer, l) => {
          if (familyOf(layer.sample) === familyOf(cpu[l]!.sample))
            near(
              layer.closedForm,
              cpu[l]!.closedForm,
              VARIANCE_TOLERANCE,
              1e-6 * cpu[l]!.gradientNormSq,
              `layer ${l} at ${budget}`,
            );
        });
      }
    },
  );

  gpuTest(
    'atomo-svd and atomo-dct by bytes plan as the CPU path, and atomo-entry by bytes stays on the CPU',
    async ({ gpu }) => {
      const layers = [rankOne(50, 40, 31), twoCosines(20, 45), { shape: [1, 13] as Shape, values: random(13, 33) }];
      for (const scheme of ['atomo-svd', 'atomo-dct'] as const) {
        const compression: Compression = { scheme, budget: 1, levels: 1, byteBudget: 700 };
        const { gpu: onGpu, cpu } = await bothRoutes(gpu.device, layers, compression);
        onGpu.forEach((layer, l) => {
          const label = `${scheme} layer ${l}`;
          expect(layer.sample.scheme, label).toBe(cpu[l]!.sample.scheme);
          expect(keptOf(layer.sample), label).toEqual(keptOf(cpu[l]!.sample));
          near(layer.closedForm, cpu[l]!.closedForm, VARIANCE_TOLERANCE, 1e-6 * cpu[l]!.gradientNormSq, label);
        });
      }
      const { tensors, destroy } = onDevice(gpu.device, layers);
      const compressor = createTensorCompressor(gpu.device, tensors, { byteBudget: 'device' });
      const byDefault = createTensorCompressor(gpu.device, tensors);
      try {
        expect(compressor.supports({ scheme: 'atomo-entry', budget: 1, levels: 1, byteBudget: 700 })).toBe(false);
        expect(compressor.supports({ scheme: 'atomo-auto', budget: 1, levels: 1 })).toBe(false);
        expect(compressor.supports({ ...auto(700), errorFeedback: true })).toBe(false);
        expect(byDefault.supports(auto(700))).toBe(false);
        // Without a byte budget the fixed schemes keep their own routes.
        expect(compressor.supports({ scheme: 'atomo-entry', budget: 1, levels: 1 })).toBe(true);
      } finally {
        compressor.destroy();
        byDefault.destroy();
        destroy();
      }
    },
  );

  gpuTest.for([
    [
      'zero gradient',
      [
        { shape: [20, 12] as Shape, values: new Float32Array(240) },
        { shape: [1, 12] as Shape, values: new Float32Array(12) },
      ],
    ],
    [
      'huge: 1e30',
      [rankOne(37, 29, 41), { shape: [19, 7] as Shape, values: random(133, 42) }].map((l) => ({
        ...l,
        values: l.values.map((x) => x * 1e30),
      })),
    ],
    [
      'tiny: 1e-30',
      [rankOne(37, 29, 43), { shape: [19, 7] as Shape, values: random(133, 44) }].map((l) => ({
        ...l,
        values: l.values.map((x) => x * 1e-30),
      })),
    ],
    [
      'sizes off the tile: 1×1, 3×65, 65×3, 129×17',
      (
        [
          [1, 1],
          [3, 65],
          [65, 3],
          [129, 17],
        ] as const
      ).map(([rows, cols], k) => ({ shape: [rows, cols] as Shape, values: random(rows * cols, 51 + k) })),
    ],
  ] as const)('%s: as the CPU path, every statistic finite', async ([name, layers], { gpu }) => {
    // Budgets below the exact bytes, so that every non-zero case draws (V > 0) with its magnitudes in the curves.
    const budget = name === 'zero gradient' ? 100 : 500;
    const { gpu: onGpu, cpu } = await bothRoutes(gpu.device, layers, auto(budget));
    onGpu.forEach((layer, l) => {
      const label = `${name} layer ${l}`;
      const normSq = cpu[l]!.gradientNormSq;
      for (const value of [layer.closedForm, layer.realised, layer.gradientNormSq])
        expect(Number.isFinite(value), label).toBe(true);
      expect(reconstruct(layer.sample).every(Number.isFinite), label).toBe(true);
      near(layer.gradientNormSq, normSq, 1e-5, 0, label);
      near(layer.closedForm, cpu[l]!.closedForm, VARIANCE_TOLERANCE, 1e-6 * normSq, label);
      if (normSq === 0) {
        expect(layer.closedForm, label).toBe(0);
        expect(layer.realised, label).toBe(0);
      }
    });
    if (name !== 'zero gradient') expect(cpu.reduce((sum, layer) => sum + layer.closedForm, 0)).toBeGreaterThan(0);
  });

  gpuTest('rank-deficient factors (the MLP with repeated and blank examples): as the CPU path', async ({ gpu }) => {
    const layout = mlpLayout({ inputSize: 20, hiddenSize: 12, classCount: 5 });
    const batch = 6;
    const backend = createGpuBackend(gpu.device, layout);
    const images = randomImages(batch, layout.inputSize, 7);
    images.copyWithin(3 * 20, 1 * 20, 2 * 20); // example 3 repeats example 1
    images.fill(0, 5 * 20, 6 * 20); // example 5 is blank
    const labels = randomLabels(batch, layout.classCount, 8);
    labels[3] = labels[1]!;
    const params = randomParameters(layout, 9);
    const compressor = createTensorCompressor(gpu.device, layout.tensors, { byteBudget: 'device', core: 'device' });
    try {
      const result = await backend.lossAndGradient(params, images, labels, batch);
      const layers = layout.tensors.map((t, layer) => ({
        layer,
        shape: t.shape,
        values: result.gradient.slice(t.offset, t.offset + t.size),
      }));
      const gradient = backend.computeGradient(params, images, labels, batch);
      expect(gradient.factors.size).toBeGreaterThan(0);
      const onGpu = await compressor.compress(gradient, auto(300), streamOf(0));
      const cpu = compressOnCpu(layers, auto(300), streamOf(0));
      near(onGpu.loss, result.loss, 1e-5, 0, 'loss');
      const total = (stats: readonly CompressedLayerStats[]) => stats.reduce((sum, s) => sum + s.closedForm, 0);
      near(
        total(onGpu.layers),
        total(cpu),
        VARIANCE_TOLERANCE,
        1e-6 * cpu.reduce((s, l) => s + l.gradientNormSq, 0),
        'Σ V',
      );
      expect(total(cpu)).toBeGreaterThan(0);
      onGpu.layers.forEach((layer, l) =>
        near(layer.gradientNormSq, cpu[l]!.gradientNormSq, 1e-4, 0, `‖g‖² of ${layout.tensors[l]!.name}`),
      );
    } finally {
      compressor.destroy();
      backend.destroy();
    }
  });

  gpuTest(
    'is unbiased over 400 draws, its realised error matches the closed form, and its mean bytes honour the budget',
    async ({ gpu }) => {
      const layers = [
        rankOne(30, 20, 61),
        twoCosines(16, 24),
        fiveEntries(25, 40),
        { shape: [18, 14] as Shape, values: random(252, 62) },
      ];
      const budget = 900;
      const draws = 400;
      const { tensors, gradient, destroy } = onDevice(gpu.device, layers);
      const compressor = createTensorCompressor(gpu.device, tensors, { byteBudget: 'device', core: 'device' });
      const rng = seededRng(63);
      // Per layer: w = g and two random directions.
      const directions = layers.map(({ values }) => [
        Float64Array.from(values),
        ...[0, 1].map(() => Float64Array.from(values, () => rng() - 0.5)),
      ]);
      const sums = directions.map((ws) => ws.map(() => ({ sum: 0, sumSq: 0 })));
      const realised = layers.map(() => ({ sum: 0, sumSq: 0 }));
      const bytes = { sum: 0, sumSq: 0 };
      const difference = { sum: 0, sumSq: 0 };
      let differing = 0;
      const closed: number[] = [];
      try {
        for (let round = 0; round < draws; round++) {
          const { layers: compressed } = await compressor.compress(gradient, auto(budget), streamOf(round));
          const onCpu = compressOnCpu(
            layers.map(({ shape, values }, layer) => ({ layer, shape, values })),
            auto(budget),
            streamOf(round),
          );
          const cpuBytes = onCpu.reduce((sum, layer, l) => sum + encodeForWire(layer.sample, l).length, 0);
          let roundBytes = 0;
          compressed.forEach((layer, l) => {
            roundBytes += encodeForWire(layer.sample, l).length;
            const estimate = reconstruct(layer.sample);
            directions[l]!.forEach((w, d) => {
              let dot = 0;
              for (let i = 0; i < w.length; i++) dot += estimate[i]! * w[i]!;
              sums[l]![d]!.sum += dot;
              sums[l]![d]!.sumSq += dot * dot;
            });
            realised[l]!.sum += layer.realised;
            realised[l]!.sumSq += layer.realised ** 2;
            closed[l] = layer.closedForm;
          });
          bytes.sum += roundBytes;
          bytes.sumSq += roundBytes ** 2;
          difference.sum += roundBytes - cpuBytes;
          difference.sumSq += (roundBytes - cpuBytes) ** 2;
          differing += roundBytes === cpuBytes ? 0 : 1;
        }
      } finally {
        compressor.destroy();
        destroy();
      }
      const meanAndError = ({ sum, sumSq }: { sum: number; sumSq: number }) => {
        const mean = sum / draws;
        return { mean, error: Math.sqrt(Math.max(0, sumSq / draws - mean * mean) / draws) };
      };
      layers.forEach(({ values }, l) => {
        directions[l]!.forEach((w, d) => {
          let truth = 0;
          let scale = 0;
          for (let i = 0; i < w.length; i++) {
            truth += values[i]! * w[i]!;
            scale += Math.abs(values[i]! * w[i]!);
          }
          const { mean, error } = meanAndError(sums[l]![d]!);
          expect(Math.abs(mean - truth), `layer ${l}, direction ${d}`).toBeLessThanOrEqual(5 * error + 1e-5 * scale);
        });
        const { mean, error } = meanAndError(realised[l]!);
        const normSq = values.reduce((sum, x) => sum + x * x, 0);
        expect(Math.abs(mean - closed[l]!), `layer ${l}: realised vs closed form`).toBeLessThanOrEqual(
          5 * error + 1e-4 * closed[l]! + 1e-6 * normSq,
        );
      });
      // The wire bytes are the CPU path's, round by round (a draw may flip only where float32 moves a probability past
      // its uniform).
      expect(differing).toBeLessThanOrEqual(draws / 100);
      expect(Math.abs(meanAndError(difference).mean)).toBeLessThanOrEqual(5 * meanAndError(difference).error + 1);
      // And the budget is spent as the CPU path spends it: to within its byte model's accuracy (1%: ⌈count/4⌉ code
      // bytes and
      // the gap varints are priced in expectation, core/atomo/byteBudget.test.ts).
      const { mean, error } = meanAndError(bytes);
      expect(Math.abs(mean - budget)).toBeLessThanOrEqual(0.01 * budget + 5 * error);
    },
  );
});
