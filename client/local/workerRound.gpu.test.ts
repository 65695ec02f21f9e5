/**
 * The one worker round (core/training/workerRound.ts) on the WebGPU backend
 * with the GPU compressor, for every scheme, against the same round on the
 * CPU backend (same weights, minibatch and streams): the device compresses
 * every scheme it supports (all but `none`, which reads the gradient back;
 * `atomo-auto` by bytes with its DCT and SVD on the device, an option),
 * each layer decodes as the scheme's sample of its tensor, and the loss and
 * the per-layer statistics that do not depend on the draw (‖g‖², the closed
 * form) agree with the CPU's to float32 accuracy. The realised error is that
 * of the sample sent, measured against the CPU gradient (which differs from
 * the GPU's by float32 rounding). Sampling itself is checked draw by draw in
 * client/gpu/compression/*.gpu.test.ts.
 */
import { describe, expect } from 'vitest';
import { SCHEME_NAMES, realisedError, reconstruct } from '../../core/atomo';
import { decodeLayer } from '../../core/codec';
import { Dataset, MinibatchSampler } from '../../core/data';
import { createCpuBackend } from '../../core/model/cpu/backend';
import { createModelLayout } from '../../core/model/layout';
import { randomParameters } from '../../core/model/testing/fixtures';
import { layerGradients } from '../../core/training/compression';
import { createWorkerRound } from '../../core/training/workerRound';
import { createGpuCompressor } from '../gpu/compression/gpuCompressor';
import { gpuTest } from '../gpu/testing/gpuTest';
import { createGpuBackend } from '../gpu/training/gpuBackend';

const layout = createModelLayout('mlp');
const count = 64;
const train = new Dataset(
  Uint8Array.from({ length: count * 784 }, (_, i) => ((i * 37) % 7 === 0 ? (i * 53) % 256 : 0)),
  Uint8Array.from({ length: count }, (_, i) => (i * 7) % 10),
);
const shard = Uint32Array.from({ length: count }, (_, i) => i);
const common = { layout, batchSize: 16, seed: 11, worker: 4, train, shard };

/** |a − b| within `relative` of |b|, plus `absolute`. */
function near(a: number, b: number, relative: number, absolute = 0): void {
  expect(Math.abs(a - b)).toBeLessThanOrEqual(relative * Math.abs(b) + absolute);
}

describe('worker round (WebGPU backend, GPU compression)', () => {
  gpuTest('compresses on the device and agrees with the CPU round, for every scheme', async ({ gpu }) => {
    const backend = createGpuBackend(gpu.device, layout);
    // The device routes of spectral and Fourier ATOMO are options; the spectral core side is fixed here (its
    // per-adapter
    // choice is measured and tested in client/gpu/compression/spectralCompressor.gpu.test.ts).
    const deviceCompressor = createGpuCompressor(backend, {
      spectral: 'device',
      core: 'device',
      dct: 'device',
      byteBudget: 'device',
    });
    const byDefault = createGpuCompressor(backend);
    expect(byDefault.supports({ scheme: 'atomo-svd', budget: 2, levels: 1 })).toBe(false);
    expect(byDefault.supports({ scheme: 'atomo-entry', budget: 2, levels: 1 })).toBe(true);
    expect(byDefault.supports({ scheme: 'atomo-dct', budget: 2, levels: 1 })).toBe(false);
    expect(byDefault.supports({ scheme: 'atomo-auto', budget: 2, levels: 1, byteBudget: 6000 })).toBe(false);
    byDefault.destroy();
    const weights = randomParameters(layout, 3);
    try {
      for (const scheme of SCHEME_NAMES) {
        // atomo-auto's knob is bytes per round for the whole model, split across its layers.
        const compression = { scheme, budget: 3, levels: 4, ...(scheme === 'atomo-auto' ? { byteBudget: 6000 } : {}) };
        const version = 2;
        const onGpu = await createWorkerRound({ ...common, compression, backend, deviceCompressor })(weights, version);
        const cpuBackend = createCpuBackend(layout);
        const onCpu = await createWorkerRound({ ...common, compression, backend: cpuBackend })(weights, version);
        // Dense needs no compression: it takes the CPU path of the same round. atomo-auto transforms on the device and
        // splits its bytes on the host (byteBudgetCompressor.ts). PowerSGD keeps its error feedback on the device.
        expect(onGpu.compressedOn, scheme).toBe(scheme === 'none' ? 'cpu' : 'webgpu');
        near(onGpu.loss, onCpu.loss, 1e-5);
        // The CPU gradient of round v's minibatch.
        const batch = train.batch(
          new MinibatchSampler(shard, common.batchSize, common.seed, common.worker).batch(version),
        );
        const cpuLayers = layerGradients(
          layout,
          await cpuBackend.lossAndGradient(weights, batch.pixels, batch.labels, common.batchSize),
        );
        expect(onGpu.layers).toHaveLength(layout.tensors.length);
        for (const { layer, shape, values } of cpuLayers) {
          const label = `${scheme} layer ${layer}`;
          const { sample } = decodeLayer(onGpu.layers[layer]!, { expectedLayer: layer, expectedShape: shape });
          // A layer whose scheme bytes would exceed float32 (a bias with one spectral atom) travels dense.
          expect([scheme, 'none'], label).toContain(sample.scheme);
          if (sample.scheme !== scheme) expect(onGpu.layers[layer]!.length, label).toBe(12 + 4 * shape[0] * shape[1]);
          const gpuStats = onGpu.layerStats[layer]!;
          const cpuStats = onCpu.layerStats[layer]!;
          near(gpuStats.gradientNormSq, cpuStats.gradientNormSq, 1e-4);
          near(gpuStats.closedForm, cpuStats.closedForm, 1e-3, 1e-9 * cpuStats.gradientNormSq);
          near(gpuStats.realised, realisedError(reconstruct(sample), values), 1e-3, 1e-6 * cpuStats.gradientNormSq);
        }
        expect(onGpu.bytes).toBe(onGpu.layers.reduce((sum, l) => sum + l.length, 0));
      }
      // atomo-entry by bytes has no transform for the device to save: the CPU path, though the device compresses
      // atomo-entry.
      const byBytes = await createWorkerRound({
        ...common,
        compression: { scheme: 'atomo-entry', budget: 3, levels: 1, byteBudget: 6000 },
        backend,
        deviceCompressor,
      })(weights, 2);
      expect(byBytes.compressedOn).toBe('cpu');
    } finally {
      deviceCompressor.destroy();
      backend.destroy();
    }
  });

  gpuTest(
    'PowerSGD keeps its error feedback on the device across rounds and agrees with the CPU round',
    async ({ gpu }) => {
      const backend = createGpuBackend(gpu.device, layout);
      const deviceCompressor = createGpuCompressor(backend);
      const weights = randomParameters(layout, 5);
      const compression = { scheme: 'powersgd', budget: 2, levels: 1 } as const;
      try {
        const onGpu = createWorkerRound({ ...common, compression, backend, deviceCompressor });
        const onCpu = createWorkerRound({ ...common, compression, backend: createCpuBackend(layout) });
        for (let version = 0; version < 4; version++) {
          const gpuRound = await onGpu(weights, version);
          const cpuRound = await onCpu(weights, version);
          expect(gpuRound.compressedOn).toBe('webgpu');
          layout.tensors.forEach((tensor, layer) => {
            const label = `round ${version} layer ${layer}`;
            const decode = (bytes: Uint8Array) =>
              reconstruct(decodeLayer(bytes, { expectedLayer: layer, expectedShape: tensor.shape }).sample);
            const gpuEstimate = decode(gpuRound.layers[layer]!);
            const cpuEstimate = decode(cpuRound.layers[layer]!);
            // The two backends' gradients differ by f32 rounding (~1e-6 relative); the warm-started power step and
            // the memory carry that forward, amplified by P's conditioning: 1e-3 of the estimate allows for it over
            // 4 rounds, while a lost memory or warm start changes the estimate by O(1) of itself.
            expect(realisedError(gpuEstimate, cpuEstimate), label).toBeLessThanOrEqual(
              1e-6 * realisedError(cpuEstimate, new Float32Array(tensor.size)),
            );
            near(
              gpuRound.layerStats[layer]!.realised,
              cpuRound.layerStats[layer]!.realised,
              1e-2,
              1e-6 * cpuRound.layerStats[layer]!.gradientNormSq,
            );
          });
        }
        // Error feedback on an unbiased scheme keeps its memory on the CPU.
        const entryWithFeedback = { scheme: 'atomo-entry', budget: 3, levels: 1, errorFeedback: true } as const;
        expect(
          (
            await createWorkerRound({ ...common, compression: entryWithFeedback, backend, deviceCompressor })(
              weights,
              0,
            )
          ).compressedOn,
        ).toBe('cpu');
      } finally {
        deviceCompressor.destroy();
        backend.destroy();
      }
    },
  );
});
