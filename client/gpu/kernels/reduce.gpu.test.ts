import { describe, expect } from 'vitest';
import { REDUCE_OPS, reduceSegments, uniformSegments, type ReduceOp } from '../../../core/linalg/reduce';
import { readF32, uploadF32 } from '../runtime/readback';
import { REDUCE_CHUNK, ReduceKernel } from './reduce';
import { gpuTest } from '../testing/gpuTest';
import { uniformArray as randomArray } from '../../../core/testing/seeded';

// Error metric. A segment's GPU result is a tree of f32 additions: a wide
// chunk adds 16 in order then 8 tree levels (≤ 24·2⁻²⁴ of the magnitudes), a
// narrow chunk up to 32 in order (≤ 32·2⁻²⁴), and each level feeds the next.
// Narrow-only, 2·10⁶ elements take 5 levels: ≤ 160·2⁻²⁴ ≈ 9.5e-6. (The bound
// passes 1e-5 beyond ~10⁷ elements per segment; typical errors are ~1e-7.)
// We require, against the Float64 reference:
//   sum, sumOfAbs, sumOfSquares: |gpu − ref| ≤ 1e-5 · (the same op over |x|),
// i.e. a relative error ≤ 1e-5 for sums of squares and of |x| (all terms ≥ 0),
// and relative to Σ|x| for signed sums; maxAbs: exact (max is exact in f32).
const TOLERANCE = 1e-5;

/** Asserts every segment's GPU result against the reference. */
async function expectMatches(
  kernel: ReduceKernel,
  op: ReduceOp,
  x: Float32Array,
  offsets: ArrayLike<number>,
): Promise<void> {
  const got = await kernel.run(op, x, offsets);
  const want = reduceSegments(op, x, offsets);
  const scale = reduceSegments(op === 'sum' ? 'sumOfAbs' : op, x, offsets);
  expect(got.length).toBe(want.length);
  for (let s = 0; s < want.length; s++) {
    if (op === 'maxAbs') expect(got[s], `segment ${s}`).toBe(want[s]);
    else expect(Math.abs(got[s]! - want[s]!), `${op} segment ${s}`).toBeLessThanOrEqual(TOLERANCE * scale[s]!);
  }
}

/**
 * Per device: the adapter's default kernel (on SwiftShader narrow-only) and one with the GPU default policy (wide for
 * long segments).
 */
const kernels = new WeakMap<GPUDevice, { adapter: ReduceKernel; wide: ReduceKernel }>();
function kernelsFor(device: GPUDevice): { adapter: ReduceKernel; wide: ReduceKernel } {
  let pair = kernels.get(device);
  if (pair === undefined) {
    pair = { adapter: new ReduceKernel(device), wide: new ReduceKernel(device, { wideMinLength: 1024 }) };
    kernels.set(device, pair);
  }
  return pair;
}
const kernelFor = (device: GPUDevice): ReduceKernel => kernelsFor(device).adapter;

describe('reduce.wgsl on Dawn', () => {
  for (const op of REDUCE_OPS) {
    gpuTest(`${op}: empty, single-element, ragged and chunk-straddling segments, both programs`, async ({ gpu }) => {
      // Lengths 0, 1, 0, 255, 256, 257, 4095, 4096, 4097, 3·4096 + 5, 0 (last one empty at the end).
      const lengths = [
        0,
        1,
        0,
        255,
        256,
        257,
        REDUCE_CHUNK - 1,
        REDUCE_CHUNK,
        REDUCE_CHUNK + 1,
        3 * REDUCE_CHUNK + 5,
        0,
      ];
      const offsets = [0];
      for (const length of lengths) offsets.push(offsets.at(-1)! + length);
      const x = randomArray(offsets.at(-1)!, 1);
      for (const kernel of Object.values(kernelsFor(gpu.device))) await expectMatches(kernel, op, x, offsets);
    });

    gpuTest(`${op}: one segment of 10⁶ and 2·10⁶ elements (3 to 5 levels), both programs`, async ({ gpu }) => {
      for (const n of [1_000_000, 2_000_000]) {
        // Positive mean so the signed sum does not cancel to noise; spread over 4 decades.
        const x = randomArray(n, 2).map((v, i) => (v + 0.25) * 10 ** ((i % 5) - 2));
        for (const kernel of Object.values(kernelsFor(gpu.device))) await expectMatches(kernel, op, x, [0, n]);
      }
    });
  }

  gpuTest('many segments: 10,000 rows of 100 and the MLP layers 784·128, 128, 128·10, 10', async ({ gpu }) => {
    const kernel = kernelFor(gpu.device);
    const rows = uniformSegments(10_000, 100);
    const layers = [0, 100_352, 100_480, 101_760, 101_770];
    for (const op of REDUCE_OPS) {
      await expectMatches(kernel, op, randomArray(1_000_000, 3), rows);
      await expectMatches(kernel, op, randomArray(101_770, 4), layers);
    }
  });

  gpuTest('no segments, only empty segments, and an all-zero input', async ({ gpu }) => {
    const kernel = kernelFor(gpu.device);
    expect(await kernel.run('sum', new Float32Array(0), [0])).toHaveLength(0);
    expect(Array.from(await kernel.run('maxAbs', new Float32Array(3), [0, 0, 0]))).toEqual([0, 0]);
    expect(Array.from(await kernel.run('sumOfSquares', new Float32Array(10_000), [0, 5000, 10_000]))).toEqual([0, 0]);
  });

  gpuTest('huge and tiny magnitudes: max |x| exact, sum of squares without overflow below 1e19', async ({ gpu }) => {
    const kernel = kernelFor(gpu.device);
    const x = randomArray(50_000, 5);
    x[123] = -3e38; // max |x| near the top of f32
    x[40_000] = 1e-30;
    const offsets = [0, 100, 200, 40_000, 40_001, 50_000];
    await expectMatches(kernel, 'maxAbs', x, offsets);
    const moderate = randomArray(50_000, 6).map((v) => v * 1e17); // x² ~ 1e34, 5·10⁴ of them < 3.4e38
    await expectMatches(kernel, 'sumOfSquares', moderate, offsets);
    await expectMatches(kernel, 'sum', moderate, offsets);
  });

  gpuTest('offsets into shared buffers; a plan recorded twice', async ({ gpu }) => {
    const { device } = gpu;
    const kernel = kernelsFor(device).wide;
    const x = randomArray(20_000, 7);
    const input = uploadF32(device, x, 'test.input');
    const output = uploadF32(device, new Float32Array(8).fill(-1), 'test.output');
    const offsets = [0, 5000, 5000, 15_000];
    const plan = kernel.plan('sumOfSquares', offsets, { input, output, inputOffset: 3, outputOffset: 2 });
    expect(plan.passCount).toBe(3); // level 0 wide and narrow, level 1 narrow
    const encoder = device.createCommandEncoder({ label: 'test.reduce' });
    plan.encode(encoder);
    plan.encode(encoder); // same result: the plan's intermediates and uniforms are its own
    device.queue.submit([encoder.finish()]);
    const got = await readF32(device, output, 8);
    const want = reduceSegments('sumOfSquares', x.subarray(3), offsets);
    expect(got.slice(0, 2)).toEqual(new Float32Array([-1, -1]));
    expect(got.slice(5)).toEqual(new Float32Array([-1, -1, -1]));
    for (let s = 0; s < 3; s++) expect(Math.abs(got[2 + s]! - want[s]!)).toBeLessThanOrEqual(TOLERANCE * want[s]!);
    plan.destroy();
    input.destroy();
    output.destroy();
  });

  gpuTest('rejects offsets outside the input', ({ gpu }) => {
    const kernel = kernelFor(gpu.device);
    const input = uploadF32(gpu.device, new Float32Array(10), 'test.input');
    const output = uploadF32(gpu.device, new Float32Array(2), 'test.output');
    expect(() => kernel.plan('sum', [0, 11], { input, output })).toThrow(RangeError);
    expect(() => kernel.plan('sum', [5, 2], { input, output })).toThrow(RangeError);
    expect(() => kernel.plan('sum', [0, 1, 2, 3], { input, output })).toThrow(RangeError); // 3 results, room for 2
    input.destroy();
    output.destroy();
  });
});
