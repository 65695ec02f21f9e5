/**
 * The factored spectral route on the device (spectralPlan.ts: thin QRs in
 * WGSL, the core SVD on the device or the host, U and V by one product
 * each) against the CPU reference, core/linalg's factoredSvd (Float64), on
 * random and adversarial factors, with the core SVD on either side.
 *
 * Tolerances, in float32 terms (u = 2⁻²⁴ ≈ 6e-8) and relative to σ₀ or
 * ‖G‖_F, each about 5× the worst measured over these cases and both sides:
 *  - σ: |σₜ − σₜ_ref| ≤ 2e-6·σ₀ (≈ 32 u). The QRs are backward stable to a
 *    few m·u, the core product and its Jacobi SVD add a few B·u; measured
 *    ≤ 3.6e-7·σ₀.
 *  - ‖Σₜ σₜuₜvₜᵀ − G‖_F ≤ 5e-6·‖G‖_F (measured ≤ 8.8e-7).
 *  - Orthonormality: uₜ = G vₜ/σₜ carries the f32 error of G vₜ, of the
 *    order u·σ₀ in absolute terms, so |uₛ·uₜ − δₛₜ| is checked against
 *    5e-6·σ₀/min(σₛ, σₜ) (plus 2e-6): tight for the atoms that matter,
 *    loose only near the noise cut-off, where sampling probabilities are
 *    of order 1e-4 of the largest (measured ≤ 6.6e-7 once scaled by
 *    min(σₛ, σₜ)/σ₀).
 */
import { describe, expect } from 'vitest';
import { factoredSvd } from '../../../core/linalg/factoredSvd';
import { seededRng } from '../../../core/testing/seeded';
import { fromTriplets, relativeFrobeniusError } from '../../../core/testing/spectral';
import { uploadF32 } from '../runtime/readback';
import { gpuTest } from '../testing/gpuTest';
import type { GpuGradient } from '../training/gpuBackend';
import { GpuSpectralCompressor, spectralCoreChoice, type SpectralCore } from './spectralCompressor';

const SIGMA_TOLERANCE = 2e-6;
const RECONSTRUCTION_TOLERANCE = 5e-6;
const ORTHONORMALITY_TOLERANCE = 5e-6;

/** A dense layer's factors: X (batch × rows) and Δ (batch × cols), example-major. */
interface Case {
  readonly name: string;
  readonly rows: number;
  readonly cols: number;
  readonly batch: number;
  readonly input: Float32Array;
  readonly delta: Float32Array;
}

function uniform(n: number, seed: number, scale = 1, offset = 0): Float32Array {
  const rng = seededRng(seed);
  return Float32Array.from({ length: n }, () => (rng() + offset) * scale);
}

function randomCase(
  name: string,
  rows: number,
  cols: number,
  batch: number,
  seed: number,
  inputScale = 1,
  deltaScale = 1e-3,
): Case {
  // Inputs like images (non-negative, correlated through their mean), deltas of both signs.
  return {
    name,
    rows,
    cols,
    batch,
    input: uniform(batch * rows, seed, inputScale),
    delta: uniform(batch * cols, seed + 1, deltaScale, -0.5),
  };
}

const CASES: Case[] = [
  randomCase('MLP first layer 784×128, batch 32', 784, 128, 32, 1),
  randomCase('101×37, batch 13 (no multiple of a tile)', 101, 37, 13, 3),
  (() => {
    // Example 3 repeats example 1, example 7 is blank, output unit 5 is dead.
    const c = randomCase('rank-deficient: repeated and blank examples, a dead unit', 200, 64, 16, 5);
    c.input.copyWithin(3 * 200, 1 * 200, 2 * 200);
    c.input.fill(0, 7 * 200, 8 * 200);
    for (let b = 0; b < 16; b++) c.delta[b * 64 + 5] = 0;
    return c;
  })(),
  (() => {
    // Δ of rank one: every example's delta a multiple of one vector, so G has rank one.
    const c = randomCase('delta of rank one', 120, 40, 24, 7);
    for (let b = 0; b < 24; b++) for (let j = 0; j < 40; j++) c.delta[b * 40 + j] = c.delta[j]! * (b - 11.5);
    return c;
  })(),
  { ...randomCase('zero deltas', 80, 30, 8, 9), name: 'zero deltas', delta: new Float32Array(8 * 30) },
  randomCase('huge: inputs 1e18, deltas 1e17', 64, 48, 12, 11, 1e18, 1e17),
  randomCase('tiny: inputs 1e-18, deltas 1e-17', 64, 48, 12, 13, 1e-18, 1e-17),
];

/** G = Xᵀ·Δ in Float64, row-major rows × cols. */
function gradientOf(c: Case): Float64Array {
  const g = new Float64Array(c.rows * c.cols);
  for (let b = 0; b < c.batch; b++) {
    for (let i = 0; i < c.rows; i++) {
      const x = c.input[b * c.rows + i]!;
      if (x === 0) continue;
      for (let j = 0; j < c.cols; j++) g[i * c.cols + j]! += x * c.delta[b * c.cols + j]!;
    }
  }
  return g;
}

/** The case on the device as a backend would hand it over: the flat gradient (then one loss), and the factors. */
function onDevice(device: GPUDevice, c: Case, g: Float64Array): { gradient: GpuGradient; destroy: () => void } {
  const flat = new Float32Array(g.length + 1);
  flat.set(g);
  flat[g.length] = 0.25;
  const buffer = uploadF32(device, flat, 'SpectralTest.gradient');
  const input = uploadF32(device, c.input, 'SpectralTest.input');
  const delta = uploadF32(device, c.delta, 'SpectralTest.delta');
  const factors = new Map([[0, { a: { buffer: input, offset: 0 }, d: { buffer: delta, offset: 0 }, batch: c.batch }]]);
  return {
    gradient: { buffer, lossOffset: g.length, batch: 1, factors },
    destroy: () => [buffer, input, delta].forEach((b) => b.destroy()),
  };
}

describe.each(['device', 'host'] as const)('factored spectral route, core SVD on the %s', (core: SpectralCore) => {
  gpuTest.for(CASES.map((c) => [c.name, c] as const))(
    '%s: σ, U Σ Vᵀ = G and orthonormal atoms, as the CPU reference',
    async ([, c], { gpu }) => {
      const g = gradientOf(c);
      const reference = factoredSvd({ input: c.input, delta: c.delta, batch: c.batch }, c.rows, c.cols);
      const { gradient, destroy } = onDevice(gpu.device, c, g);
      const spectral = new GpuSpectralCompressor(gpu.device, { core });
      try {
        const tensors = [{ offset: 0, shape: [c.rows, c.cols] as const }];
        const decomposition = await spectral.decompose(tensors, gradient, core);
        expect(decomposition.loss).toBeCloseTo(0.25, 6);
        const [{ k, u, sigma, v }] = (await spectral.readDecomposition(decomposition)) as [
          { k: number; u: Float32Array; sigma: Float64Array; v: Float32Array },
        ];
        expect(k).toBe(Math.min(c.rows, c.cols, c.batch));
        const sigma0 = reference.singularValues[0] ?? 0;
        let worstSigma = 0;
        for (let t = 0; t < k; t++)
          worstSigma = Math.max(worstSigma, Math.abs(sigma[t]! - (reference.singularValues[t] ?? 0)));
        for (const s of sigma) expect(Number.isFinite(s)).toBe(true);
        if (sigma0 === 0) {
          // Zero deltas: every σ is exactly 0 and nothing is ever an atom.
          expect([...sigma].every((s) => s === 0)).toBe(true);
          const compressed = await spectral.compress(
            { tensors, gradient, stream: (layer) => ({ seed: 1, worker: 0, round: 0, layer }) },
            2,
          );
          expect(compressed.layers[0]!.sample).toMatchObject({ count: 0 });
          expect(compressed.layers[0]!.gradientNormSq).toBe(0);
          return;
        }
        expect(worstSigma / sigma0).toBeLessThanOrEqual(SIGMA_TOLERANCE);
        const reconstruction = relativeFrobeniusError(fromTriplets(u, sigma, v, c.rows, c.cols, k), g);
        expect(reconstruction).toBeLessThanOrEqual(RECONSTRUCTION_TOLERANCE);
        // Atoms above the noise cut-off (max(rows, cols)·2⁻²³·σ₀) are orthonormal to the stated bound.
        const cutoff = Math.max(c.rows, c.cols) * 2 ** -23 * sigma[0]!;
        let worstWeighted = 0;
        for (const [vectors, length] of [
          [u, c.rows],
          [v, c.cols],
        ] as const) {
          for (let s = 0; s < k && sigma[s]! > cutoff; s++) {
            for (let t = s; t < k && sigma[t]! > cutoff; t++) {
              let dot = 0;
              for (let i = 0; i < length; i++) dot += vectors[s * length + i]! * vectors[t * length + i]!;
              const error = Math.abs(dot - (s === t ? 1 : 0));
              const bound = (ORTHONORMALITY_TOLERANCE * sigma[0]!) / Math.min(sigma[s]!, sigma[t]!) + 2e-6;
              expect(
                error,
                `${length === c.rows ? 'u' : 'v'}${s}·${length === c.rows ? 'u' : 'v'}${t}`,
              ).toBeLessThanOrEqual(bound);
              worstWeighted = Math.max(worstWeighted, (error * Math.min(sigma[s]!, sigma[t]!)) / sigma[0]!);
            }
          }
        }
        console.log(
          `${core} core, ${c.name}: σ ${(worstSigma / sigma0).toExponential(1)}·σ₀, ` +
            `U Σ Vᵀ ${reconstruction.toExponential(1)}, ` +
            `orthonormality·σ/σ₀ ${worstWeighted.toExponential(1)}`,
        );
      } finally {
        spectral.destroy();
        destroy();
      }
    },
  );
});

describe('factored spectral route, the core side per adapter', () => {
  gpuTest(
    "'auto' measures both sides once, keeps the faster for the adapter, and compresses with it",
    async ({ gpu }) => {
      const c = CASES[0]!;
      const g = gradientOf(c);
      const { gradient, destroy } = onDevice(gpu.device, c, g);
      const spectral = new GpuSpectralCompressor(gpu.device);
      try {
        expect(spectralCoreChoice(gpu.device)).toBeUndefined();
        const tensors = [{ offset: 0, shape: [c.rows, c.cols] as const }];
        const compressed = await spectral.compress(
          { tensors, gradient, stream: (layer) => ({ seed: 1, worker: 0, round: 0, layer }) },
          2,
        );
        const choice = spectralCoreChoice(gpu.device)!;
        expect(choice.deviceMs).toBeGreaterThan(0);
        expect(choice.hostMs).toBeGreaterThan(0);
        expect(choice.core).toBe(choice.deviceMs <= choice.hostMs ? 'device' : 'host');
        expect(compressed.layers[0]!.sample.scheme).toBe('atomo-svd');
        console.log(
          `core SVD on this adapter: device ${choice.deviceMs.toFixed(1)} ms, ` +
            `host ${choice.hostMs.toFixed(1)} ms per compress → ${choice.core}`,
        );
      } finally {
        spectral.destroy();
        destroy();
      }
    },
  );
});

describe('factored spectral route, plans', () => {
  gpuTest(
    'a new gradient buffer with the same label and shapes gets a plan of its own (a new backend of the same kind)',
    async ({ gpu }) => {
      // Two backends of one kind label their gradient buffers alike; the first's buffers are destroyed before the
      // second's round.
      const first = randomCase('first', 101, 37, 13, 21);
      const second = randomCase('second', 101, 37, 13, 23);
      const tensors = [{ offset: 0, shape: [first.rows, first.cols] as const }];
      const spectral = new GpuSpectralCompressor(gpu.device, { core: 'host' });
      try {
        const old = onDevice(gpu.device, first, gradientOf(first));
        await spectral.readDecomposition(await spectral.decompose(tensors, old.gradient, 'host'));
        old.destroy();
        const g = gradientOf(second);
        const current = onDevice(gpu.device, second, g);
        try {
          const [triplets] = await spectral.readDecomposition(
            await spectral.decompose(tensors, current.gradient, 'host'),
          );
          const reference = factoredSvd(
            { input: second.input, delta: second.delta, batch: second.batch },
            second.rows,
            second.cols,
          );
          const sigma0 = reference.singularValues[0]!;
          for (let t = 0; t < 5; t++)
            expect(Math.abs(triplets!.sigma[t]! - reference.singularValues[t]!)).toBeLessThanOrEqual(
              SIGMA_TOLERANCE * sigma0,
            );
        } finally {
          current.destroy();
        }
      } finally {
        spectral.destroy();
      }
    },
  );
});
