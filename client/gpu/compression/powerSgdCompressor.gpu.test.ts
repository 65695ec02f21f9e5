/**
 * PowerSGD on the GPU against the core reference (core/atomo/schemes/powersgd.ts
 * through compressLayer, core/atomo/errorFeedback.ts), round by round on the
 * same inputs and streams: P̂, Q, the error-feedback memory e, ĝ and the
 * statistics, on layers whose sides are not multiples of the matmul tile
 * (37×45, 1×13, 5×3) and one that is (64×32), on both routes of P's
 * orthonormalisation (PowerSgdRoute); a zero gradient (then fresh
 * draws, as on the CPU); a rank-deficient one; magnitudes of 10^±30, whose
 * squared norms f32 cannot hold; separate memories per caller; the codec.
 *
 * Tolerances (float32 against float64): a P̂ column differs by at most 10⁻⁴
 * (unit vectors), Q and e by 10⁻⁴·‖M‖ (M = g + e, the matrix compressed).
 * The f32 unit roundoff 6·10⁻⁸ times inner dimensions ≤ 64 times P's
 * condition number (≤ ~20 for these inputs) stays below 10⁻⁴; a wrong step
 * (no warm start, no memory, a transposed factor) is off by O(1).
 */
import { describe, expect } from 'vitest';
import { compressLayer, powerSgdScheme, reconstruct, type LayerMemory } from '../../../core/atomo';
import type { LayerSample, PowerSgdSample, Shape } from '../../../core/atomo/types';
import { decodeLayer, encodeLayer } from '../../../core/codec';
import { lowRankMatrix, randomMatrix } from '../../../core/linalg/random-matrix';
import type { StreamId } from '../../../core/rng';
import type { CompressedLayerStats } from '../../../core/training/compression';
import { MatmulKernel } from '../kernels/matmul';
import { uploadF32 } from '../runtime/readback';
import { gpuTest } from '../testing/gpuTest';
import { createTensorCompressor } from './gpuCompressor';
import { GpuPowerSgd, type PowerSgdRoute } from './powerSgdCompressor';
import type { GradientTensor } from './tensors';

const TOLERANCE = 1e-4;
const LOSSES = [0.25, 0.75];
const streamOf =
  (round: number) =>
  (layer: number): StreamId => ({ seed: 5, worker: 3, round, layer });

const SHAPES: readonly Shape[] = [
  [37, 45],
  [1, 13],
  [64, 32],
  [5, 3],
];

/** Tensors packed one after the other in a flat buffer, the losses after them. */
function layout(shapes: readonly Shape[]): { tensors: GradientTensor[]; floats: number } {
  let offset = 0;
  const tensors = shapes.map((shape) => {
    const tensor = { offset, shape };
    offset += shape[0] * shape[1];
    return tensor;
  });
  return { tensors, floats: offset };
}

const norm = (x: ArrayLike<number>): number => {
  let sum = 0;
  for (let i = 0; i < x.length; i++) sum += x[i]! ** 2;
  return Math.sqrt(sum);
};
const distance = (a: ArrayLike<number>, b: ArrayLike<number>): number => norm(Array.from(a, (x, i) => x - b[i]!));
const column = (x: ArrayLike<number>, a: number, n: number): number[] =>
  Array.from({ length: n }, (_, i) => x[a * n + i]!);

/** The GPU compressor and the CPU reference (one LayerMemory per tensor) on the same flat buffer, round after round. */
class Pair {
  readonly memories: LayerMemory[];
  /** The caller's memory key, or none (nothing kept, as the CPU scheme without memory). */
  readonly key: object | undefined;
  readonly #buffer: GPUBuffer;
  readonly #floats: number;

  constructor(
    readonly device: GPUDevice,
    readonly gpu: GpuPowerSgd,
    readonly tensors: GradientTensor[],
    floats: number,
    readonly rank: number,
    keep = true,
  ) {
    this.key = keep ? {} : undefined;
    this.memories = tensors.map(() => ({}));
    this.#floats = floats;
    this.#buffer = uploadF32(device, new Float32Array(floats + LOSSES.length), 'PowerSgdTest.gradient');
  }

  /** One round on both sides; per layer the GPU's statistics, the CPU's sample and M = g + e_old. */
  async round(
    layers: readonly Float32Array[],
    round: number,
  ): Promise<{
    gpu: CompressedLayerStats[];
    cpu: { sample: LayerSample; variance: number; m: Float64Array }[];
    loss: number;
  }> {
    const flat = new Float32Array(this.#floats + LOSSES.length);
    this.tensors.forEach((t, l) => flat.set(layers[l]!, t.offset));
    flat.set(LOSSES, this.#floats);
    this.device.queue.writeBuffer(this.#buffer, 0, flat);
    const gradient = { buffer: this.#buffer, lossOffset: this.#floats, batch: LOSSES.length, factors: new Map() };
    const out = await this.gpu.compress(
      { tensors: this.tensors, gradient, stream: streamOf(round) },
      this.rank,
      this.key,
    );
    const cpu = this.tensors.map((t, l) => {
      const g = layers[l]!;
      const error = this.memories[l]!.error;
      const m = Float64Array.from(g, (x, i) => x + (error?.[i] ?? 0));
      const memory = this.key === undefined ? {} : { memory: this.memories[l]! };
      return { ...compressLayer('powersgd', g, t.shape, { budget: this.rank, ...memory }, streamOf(round)(l)), m };
    });
    return { gpu: out.layers, cpu, loss: out.loss };
  }

  /** The GPU's memory of layer l. */
  async memory(l: number): Promise<Float32Array> {
    const t = this.tensors[l]!;
    const all = await this.gpu.readMemory(this.key!);
    return all!.subarray(t.offset, t.offset + t.shape[0] * t.shape[1]);
  }

  destroy(): void {
    this.#buffer.destroy();
  }
}

const asPowerSgd = (sample: LayerSample): PowerSgdSample => {
  if (sample.scheme !== 'powersgd') throw new Error(`a ${sample.scheme} sample`);
  return sample;
};

/** P̂ column by column (columns past `columns` skipped), Q and the estimate against the CPU's, relative to ‖M‖. */
function expectFactors(
  label: string,
  shape: Shape,
  got: PowerSgdSample,
  want: PowerSgdSample,
  m: Float64Array,
  columns = want.rank,
): void {
  const [rows, cols] = shape;
  const scale = norm(m);
  expect(got.rank, label).toBe(want.rank);
  for (let a = 0; a < columns; a++) {
    expect(distance(column(got.p, a, rows), column(want.p, a, rows)), `${label} P̂ column ${a}`).toBeLessThanOrEqual(
      TOLERANCE,
    );
    expect(distance(column(got.q, a, cols), column(want.q, a, cols)), `${label} Q column ${a}`).toBeLessThanOrEqual(
      TOLERANCE * scale,
    );
  }
  expect(distance(reconstruct(got), reconstruct(want)), `${label} ĝ`).toBeLessThanOrEqual(TOLERANCE * scale);
}

type Open = (shapes: readonly Shape[], rank: number, keep?: boolean) => Pair;

/**
 * Runs `body` with a GPU PowerSGD on `route` and a way to open Pairs on it (shapes packed by layout()); frees them all
 * after.
 */
async function withPowerSgd(
  device: GPUDevice,
  route: PowerSgdRoute,
  body: (open: Open, powerSgd: GpuPowerSgd) => Promise<void>,
): Promise<void> {
  const matmul = new MatmulKernel(device);
  const powerSgd = new GpuPowerSgd(device, matmul, route);
  const pairs: Pair[] = [];
  try {
    await body((shapes, rank, keep = true) => {
      const { tensors, floats } = layout(shapes);
      const pair = new Pair(device, powerSgd, tensors, floats, rank, keep);
      pairs.push(pair);
      return pair;
    }, powerSgd);
  } finally {
    for (const pair of pairs) pair.destroy();
    powerSgd.destroy();
    matmul.destroy();
  }
}

for (const route of ['host', 'device'] as const)
  describe(`GPU PowerSGD, P orthonormalised on the ${route}`, () => {
    gpuTest(
      'equals the core scheme with error feedback round by round: P̂, Q, memory, ĝ and statistics',
      async ({ gpu }) => {
        await withPowerSgd(gpu.device, route, async (open) => {
          const pair = open(SHAPES, 3);
          for (let round = 0; round < 4; round++) {
            const layers = SHAPES.map(([rows, cols], l) =>
              Float32Array.from(randomMatrix(rows, cols, 100 * round + l)),
            );
            const { gpu: got, cpu, loss } = await pair.round(layers, round);
            expect(loss).toBe(0.5);
            for (let l = 0; l < SHAPES.length; l++) {
              const label = `round ${round} layer ${l}`;
              const shape = SHAPES[l]!;
              const sample = asPowerSgd(got[l]!.sample);
              const want = asPowerSgd(cpu[l]!.sample);
              expect(sample.rank, label).toBe(Math.min(3, ...shape));
              expectFactors(label, shape, sample, want, cpu[l]!.m);
              const scale = norm(cpu[l]!.m);
              expect(distance(await pair.memory(l), pair.memories[l]!.error!), `${label} memory`).toBeLessThanOrEqual(
                TOLERANCE * scale,
              );
              // ‖ĝ − g‖² (the biased scheme's "closed form" too) and ‖g‖², in f32 on the device.
              const normSq = norm(layers[l]!) ** 2;
              expect(Math.abs(got[l]!.realised - cpu[l]!.variance), label).toBeLessThanOrEqual(
                1e-3 * cpu[l]!.variance + 1e-6 * scale ** 2,
              );
              expect(got[l]!.closedForm, label).toBe(got[l]!.realised);
              expect(Math.abs(got[l]!.gradientNormSq - normSq), label).toBeLessThanOrEqual(1e-5 * normSq);
              // Through the wire format unchanged.
              expect(decodeLayer(encodeLayer(sample, l)).sample, label).toEqual(sample);
            }
            // 5×3 at rank 3 = min(rows, cols): P̂ spans M's columns, nothing is left to remember.
            expect(norm(pair.memories[3]!.error!)).toBeLessThanOrEqual(1e-5 * norm(cpu[3]!.m));
          }
        });
      },
    );

    gpuTest(
      'a zero gradient sends zero factors, keeps no memory, and the next round draws afresh as the CPU does',
      async ({ gpu }) => {
        await withPowerSgd(gpu.device, route, async (open) => {
          const pair = open(SHAPES, 2);
          const zero = await pair.round(
            SHAPES.map(([rows, cols]) => new Float32Array(rows * cols)),
            0,
          );
          for (let l = 0; l < SHAPES.length; l++) {
            const sample = asPowerSgd(zero.gpu[l]!.sample);
            expect(sample.rank).toBe(asPowerSgd(zero.cpu[l]!.sample).rank);
            expect([...sample.p, ...sample.q].every((x) => x === 0)).toBe(true);
            expect(zero.gpu[l]!.realised).toBe(0);
            expect(zero.gpu[l]!.gradientNormSq).toBe(0);
            expect([...(await pair.memory(l))].every((x) => x === 0)).toBe(true);
          }
          for (let round = 1; round < 3; round++) {
            const layers = SHAPES.map(([rows, cols], l) => Float32Array.from(randomMatrix(rows, cols, 7 * round + l)));
            const { gpu: got, cpu } = await pair.round(layers, round);
            for (let l = 0; l < SHAPES.length; l++) {
              expectFactors(
                `round ${round} layer ${l}`,
                SHAPES[l]!,
                asPowerSgd(got[l]!.sample),
                asPowerSgd(cpu[l]!.sample),
                cpu[l]!.m,
              );
              expect(distance(await pair.memory(l), pair.memories[l]!.error!)).toBeLessThanOrEqual(
                TOLERANCE * norm(cpu[l]!.m),
              );
            }
          }
        });
      },
    );

    gpuTest(
      'a rank-deficient gradient is reconstructed exactly; the columns beyond its rank carry nothing',
      async ({ gpu }) => {
        const shapes: Shape[] = [
          [37, 45],
          [33, 20],
        ];
        await withPowerSgd(gpu.device, route, async (open) => {
          const pair = open(shapes, 4);
          for (let round = 0; round < 2; round++) {
            // Rank 1 and 2 at rank 4: P = MQ has 1 (2) independent columns, the rest are rounding noise.
            const layers = shapes.map(([rows, cols], l) => Float32Array.from(lowRankMatrix(rows, cols, l + 1, 60 + l)));
            const { gpu: got, cpu } = await pair.round(layers, round);
            for (let l = 0; l < shapes.length; l++) {
              const label = `round ${round} layer ${l}`;
              const [rows, cols] = shapes[l]!;
              const sample = asPowerSgd(got[l]!.sample);
              const scale = norm(cpu[l]!.m);
              // The first round shares the start; later the CPU keeps its noise columns' Q and the GPU draws afresh.
              if (round === 0) expectFactors(label, shapes[l]!, sample, asPowerSgd(cpu[l]!.sample), cpu[l]!.m, l + 1);
              for (let a = l + 1; a < sample.rank; a++) {
                // The device's f32 Gram–Schmidt drops what is rounding noise; the core's (host) normalises it, and Q
                // = MᵀP̂ then carries nothing.
                if (route === 'device') {
                  expect(
                    column(sample.p, a, rows).every((x) => x === 0),
                    `${label} P̂ column ${a}`,
                  ).toBe(true);
                  expect(
                    column(sample.q, a, cols).every((x) => x === 0),
                    `${label} Q column ${a}`,
                  ).toBe(true);
                } else {
                  expect(norm(column(sample.p, a, rows)), `${label} P̂ column ${a}`).toBeCloseTo(1, 5);
                  expect(norm(column(sample.q, a, cols)), `${label} Q column ${a}`).toBeLessThanOrEqual(
                    TOLERANCE * scale,
                  );
                }
              }
              // Both send P̂P̂ᵀM = M: nothing is left in either memory.
              expect(distance(reconstruct(sample), cpu[l]!.m), label).toBeLessThanOrEqual(TOLERANCE * scale);
              expect(norm(await pair.memory(l)), label).toBeLessThanOrEqual(TOLERANCE * scale);
              expect(norm(pair.memories[l]!.error!), label).toBeLessThanOrEqual(TOLERANCE * scale);
            }
          }
        });
      },
    );

    gpuTest('agrees at magnitudes of 1e30 and 1e-30, whose squared norms f32 cannot hold', async ({ gpu }) => {
      await withPowerSgd(gpu.device, route, async (open) => {
        for (const magnitude of [1e30, 1e-30]) {
          const pair = open(SHAPES, 3);
          for (let round = 0; round < 2; round++) {
            const layers = SHAPES.map(([rows, cols], l) =>
              Float32Array.from(randomMatrix(rows, cols, 30 + round * 10 + l), (x) => x * magnitude),
            );
            const { gpu: got, cpu } = await pair.round(layers, round);
            for (let l = 0; l < SHAPES.length; l++) {
              const label = `${magnitude} round ${round} layer ${l}`;
              expectFactors(label, SHAPES[l]!, asPowerSgd(got[l]!.sample), asPowerSgd(cpu[l]!.sample), cpu[l]!.m);
              expect(distance(await pair.memory(l), pair.memories[l]!.error!), label).toBeLessThanOrEqual(
                TOLERANCE * norm(cpu[l]!.m),
              );
            }
          }
        }
      });
    });

    gpuTest(
      'keeps one memory per caller; without one it is the CPU scheme without memory; the worker compressor routes it',
      async ({ gpu }) => {
        await withPowerSgd(gpu.device, route, async (open, powerSgd) => {
          const first = open(SHAPES, 2);
          const second = open(SHAPES, 2);
          const stateless = open(SHAPES, 2, false);
          const { tensors, floats } = layout(SHAPES);
          // Interleaved callers on different gradients: each matches its own CPU reference.
          for (let round = 0; round < 3; round++) {
            for (const [pair, seed] of [
              [first, 200],
              [second, 300],
              [stateless, 400],
            ] as const) {
              const layers = SHAPES.map(([rows, cols], l) =>
                Float32Array.from(randomMatrix(rows, cols, seed + 10 * round + l)),
              );
              const { gpu: got, cpu } = await pair.round(layers, round);
              for (let l = 0; l < SHAPES.length; l++)
                expectFactors(
                  `seed ${seed} round ${round} layer ${l}`,
                  SHAPES[l]!,
                  asPowerSgd(got[l]!.sample),
                  asPowerSgd(cpu[l]!.sample),
                  cpu[l]!.m,
                );
            }
          }
          expect(await powerSgd.readMemory({})).toBeNull();
          // The worker's compressor takes PowerSGD (not above 256 columns), not error feedback on an unbiased scheme.
          const compressor = createTensorCompressor(gpu.device, tensors);
          try {
            expect(compressor.supports({ scheme: 'powersgd', budget: 2, levels: 1 })).toBe(true);
            expect(compressor.supports({ scheme: 'powersgd', budget: 1.5, levels: 1 })).toBe(false);
            expect(compressor.supports({ scheme: 'atomo-entry', budget: 2, levels: 1, errorFeedback: true })).toBe(
              false,
            );
            const wide = createTensorCompressor(gpu.device, [{ offset: 0, shape: [300, 300] }]);
            expect(wide.supports({ scheme: 'powersgd', budget: 257, levels: 1 })).toBe(false);
            expect(wide.supports({ scheme: 'powersgd', budget: 256, levels: 1 })).toBe(true);
            wide.destroy();
            const layers = SHAPES.map(([rows, cols], l) => Float32Array.from(randomMatrix(rows, cols, 500 + l)));
            const flat = new Float32Array(floats + LOSSES.length);
            tensors.forEach((t, l) => flat.set(layers[l]!, t.offset));
            const buffer = uploadF32(gpu.device, flat, 'PowerSgdTest.worker');
            const out = await compressor.compress(
              { buffer, lossOffset: floats, batch: LOSSES.length, factors: new Map() },
              { scheme: 'powersgd', budget: 2, levels: 1 },
              streamOf(0),
            );
            // Eight newer callers: the compressor keeps eight memories, so both earlier ones are gone (their next round
            // starts afresh).
            expect(await powerSgd.readMemory(first.key!)).not.toBeNull();
            const gradient = { buffer, lossOffset: floats, batch: LOSSES.length, factors: new Map() };
            for (let i = 0; i < 8; i++) await powerSgd.compress({ tensors, gradient, stream: streamOf(0) }, 2, {});
            expect(await powerSgd.readMemory(first.key!)).toBeNull();
            expect(await powerSgd.readMemory(second.key!)).toBeNull();
            buffer.destroy();
            tensors.forEach((t, l) => {
              const want = powerSgdScheme.compress(layers[l]!, t.shape, { budget: 2 }, streamOf(0)(l));
              expectFactors(
                `worker layer ${l}`,
                t.shape,
                asPowerSgd(out.layers[l]!.sample),
                asPowerSgd(want.sample),
                Float64Array.from(layers[l]!),
              );
            });
          } finally {
            compressor.destroy();
          }
        });
      },
    );
  });
