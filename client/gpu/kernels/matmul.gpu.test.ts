import { describe, expect } from 'vitest';
import { matmul, matmulExtents, resolveMatmulShape, type MatmulShape } from '../../../core/linalg/matmul';
import { MatmulKernel, chooseMatmulProgram, matmulOptionsFor } from './matmul';
import { readF32, uploadF32 } from '../runtime/readback';
import { gpuTest } from '../testing/gpuTest';
import { uniformArray as randomArray } from '../../../core/testing/seeded';

// Error metric. f32 summation of k products has error at most about k·2⁻²⁴
// times Σ|a||b| (the sum of magnitudes, not |Σab|: under cancellation |C| can
// be tiny while the rounding error is not). So for every element
//   |C_gpu − C_ref| ≤ 1e-5·√k · S,  S = |α|·Σ_p|op(A)_ip||op(B)_pj| + |β|·|C_old|,
// with C_ref from the Float64 reference. k·2⁻²⁴ ≤ 1e-5·√k holds for k up to
// 28,000, so the bound is a guarantee, not a hope. Where S = 0 the GPU must
// give exactly 0.
const tolerance = (k: number): number => 1e-5 * Math.sqrt(Math.max(k, 1));

/** One default kernel per device, so the file compiles each pipeline once. */
const kernels = new WeakMap<GPUDevice, MatmulKernel>();
function kernelFor(device: GPUDevice): MatmulKernel {
  let kernel = kernels.get(device);
  if (kernel === undefined) {
    kernel = new MatmulKernel(device); // on SwiftShader: a few workgroups looping over tiles
    kernels.set(device, kernel);
  }
  return kernel;
}

const abs = (x: Float32Array): Float32Array => x.map(Math.abs);

/** Worst error of the GPU product in units of S (see above); Infinity on NaN or on a nonzero where S = 0. */
async function worstError(
  kernel: MatmulKernel,
  shape: MatmulShape,
  a: Float32Array,
  b: Float32Array,
  c?: Float32Array,
): Promise<number> {
  const s = resolveMatmulShape(shape);
  const extent = matmulExtents(s).c;
  const got = await kernel.run(s, a, b, c);
  const want = c?.slice() ?? new Float32Array(extent);
  matmul(s, a, b, want);
  const scale = c === undefined ? new Float32Array(extent) : abs(c);
  matmul({ ...s, alpha: Math.abs(s.alpha), beta: Math.abs(s.beta) }, abs(a), abs(b), scale);
  let worst = 0;
  for (let i = 0; i < extent; i++) {
    const error = Math.abs(got[i]! - want[i]!);
    if (Number.isNaN(error)) return Infinity;
    if (error > 0) worst = Math.max(worst, scale[i]! > 0 ? error / scale[i]! : Infinity);
  }
  return worst;
}

/** Random A and B (and C when β ≠ 0) for a shape. */
function operands(shape: MatmulShape, seed: number): { a: Float32Array; b: Float32Array; c?: Float32Array } {
  const extents = matmulExtents(shape);
  const a = randomArray(extents.a, seed);
  const b = randomArray(extents.b, seed + 1);
  return (shape.beta ?? 0) === 0 ? { a, b } : { a, b, c: randomArray(extents.c, seed + 2) };
}

const TRANSPOSES = [
  { transA: false, transB: false, name: 'A·B' },
  { transA: true, transB: false, name: 'Aᵀ·B' },
  { transA: false, transB: true, name: 'A·Bᵀ' },
  { transA: true, transB: true, name: 'Aᵀ·Bᵀ' },
] as const;

describe('matmul/tiled.wgsl on Dawn', () => {
  // 1, 3 and 31, 33 straddle the vec4 width and the 32-wide tile; 64 is exact; 127 is both off by one.
  for (const { transA, transB, name } of TRANSPOSES) {
    gpuTest(`${name}: square sizes 1, 3, 31, 33, 64, 127 and mixed shapes`, async ({ gpu }) => {
      const kernel = kernelFor(gpu.device);
      const shapes: MatmulShape[] = [
        ...[1, 3, 31, 33, 64, 127].map((size) => ({ m: size, n: size, k: size })),
        { m: 33, n: 1, k: 127 },
        { m: 1, n: 127, k: 33 },
        { m: 127, n: 31, k: 3 },
        { m: 3, n: 64, k: 784 },
        { m: 64, n: 36, k: 100 },
      ];
      for (const [index, base] of shapes.entries()) {
        const shape = { ...base, transA, transB };
        const { a, b } = operands(shape, 10 * index + 1);
        expect(await worstError(kernel, shape, a, b), JSON.stringify(shape)).toBeLessThanOrEqual(tolerance(shape.k));
      }
    });
  }

  gpuTest('784³ (checked on the first and last 48 rows)', async ({ gpu }) => {
    const kernel = kernelFor(gpu.device);
    const shape = { m: 784, n: 784, k: 784 };
    const { a, b } = operands(shape, 7);
    const got = await kernel.run(shape, a, b);
    // The Float64 reference of all 784 rows costs seconds of JS; these rows cover the first and the ragged last tile.
    for (const first of [0, 784 - 48]) {
      const rows = { m: 48, n: 784, k: 784 };
      const slice = a.subarray(first * 784, (first + 48) * 784);
      const want = new Float32Array(48 * 784);
      matmul(rows, slice, b, want);
      const scale = new Float32Array(48 * 784);
      matmul(rows, abs(slice), abs(b), scale);
      let worst = 0;
      for (let i = 0; i < want.length; i++)
        worst = Math.max(worst, Math.abs(got[first * 784 + i]! - want[i]!) / scale[i]!);
      expect(worst).toBeLessThanOrEqual(tolerance(784));
    }
  });

  // MLP 784-128-10 at batch 32, weights stored in×out: forward X·W, backward Δ·Wᵀ and Xᵀ·Δ (accumulated,
  // scaled).
  const training: [string, MatmulShape][] = [
    ['forward 32×784·784×128', { m: 32, n: 128, k: 784 }],
    ['forward 32×128·128×10', { m: 32, n: 10, k: 128 }],
    ['input gradient Δ·W₁ᵀ 32×128·128×784', { m: 32, n: 784, k: 128, transB: true }],
    ['weight gradient X·ᵀΔ 784×32·32×128, β = 1', { m: 784, n: 128, k: 32, transA: true, beta: 1 }],
    ['hidden gradient Δ·W₂ᵀ 32×10·10×128', { m: 32, n: 128, k: 10, transB: true }],
    [
      'weight gradient Hᵀ·Δ 128×32·32×10, α = −0.5, β = 0.9',
      { m: 128, n: 10, k: 32, transA: true, alpha: -0.5, beta: 0.9 },
    ],
  ];
  for (const [name, shape] of training) {
    gpuTest(`training shape: ${name}`, async ({ gpu }) => {
      const kernel = kernelFor(gpu.device);
      const { a, b, c } = operands(shape, 3);
      expect(await worstError(kernel, shape, a, b, c)).toBeLessThanOrEqual(tolerance(shape.k));
    });
  }

  gpuTest(
    'every program agrees with the reference: split-K or not, one workgroup per tile or a few looping',
    async ({ gpu }) => {
      const configs = [
        { targetWorkgroups: 64, maxWorkgroups: Infinity }, // split-K, a workgroup per job
        { targetWorkgroups: 64, maxWorkgroups: 3 }, // split-K, 3 workgroups share the jobs unevenly
        { targetWorkgroups: 1, maxWorkgroups: 1 }, // no split, one workgroup does everything
        { targetWorkgroups: 1, maxWorkgroups: Infinity },
      ];
      const shapes: MatmulShape[] = [
        { m: 32, n: 128, k: 784 }, // vec4
        { m: 30, n: 10, k: 300, transA: true, alpha: 2, beta: -1 }, // scalar, accumulating
        { m: 20, n: 24, k: 200, transB: true, batch: 3 }, // batched, vec4
        { m: 100, n: 70, k: 40, transA: true, transB: true, batch: 2 }, // many tiles, scalar
      ];
      for (const options of configs) {
        const kernel = new MatmulKernel(gpu.device, options);
        for (const [index, shape] of shapes.entries()) {
          const { a, b, c } = operands(shape, 5);
          const splits = chooseMatmulProgram(
            resolveMatmulShape(shape),
            { a: 0, b: 0, c: 0 },
            { a: 64, b: 64, c: 64 },
            options,
          ).splits;
          expect(splits > 1).toBe(options.targetWorkgroups > 1 && index < 3);
          expect(
            await worstError(kernel, shape, a, b, c),
            `${JSON.stringify(options)} ${JSON.stringify(shape)}`,
          ).toBeLessThanOrEqual(tolerance(shape.k));
        }
        kernel.destroy();
      }
    },
  );

  gpuTest('batched products, packed, broadcast and padded strides, every transpose', async ({ gpu }) => {
    const kernel = kernelFor(gpu.device);
    for (const { transA, transB, name } of TRANSPOSES) {
      const shapes: MatmulShape[] = [
        { m: 33, n: 31, k: 20, batch: 5 },
        { m: 16, n: 40, k: 36, batch: 4, strideB: 0 }, // one B shared by the batch, vec4
        { m: 7, n: 9, k: 5, batch: 3, strideA: 40, strideB: 50, strideC: 70, beta: 1 }, // gaps between items
      ];
      for (const base of shapes) {
        const shape = { ...base, transA, transB };
        const { a, b, c } = operands(shape, 9);
        expect(await worstError(kernel, shape, a, b, c), `${name} ${JSON.stringify(shape)}`).toBeLessThanOrEqual(
          tolerance(shape.k),
        );
      }
    }
  });

  gpuTest('offsets into shared buffers, and nothing written outside C', async ({ gpu }) => {
    const { device } = gpu;
    const kernel = kernelFor(device);
    // Offsets 4, 8, 12 keep the vec4 program; 1, 2, 3 force the scalar one.
    for (const [offsetA, offsetB, offsetC] of [
      [4, 8, 12],
      [1, 2, 3],
    ] as const) {
      const shape = resolveMatmulShape({ m: 36, n: 32, k: 40, transB: true });
      const extents = matmulExtents(shape);
      const a = randomArray(offsetA + extents.a, 1);
      const b = randomArray(offsetB + extents.b, 2);
      const sentinel = 12345;
      const buffers = {
        a: uploadF32(device, a, 'test.a'),
        b: uploadF32(device, b, 'test.b'),
        c: uploadF32(device, new Float32Array(offsetC + extents.c + 5).fill(sentinel), 'test.c'),
      };
      const operandsGpu = { ...buffers, offsetA, offsetB, offsetC };
      expect(kernel.plan(shape, operandsGpu).program.vec4).toBe(offsetA === 4);
      const encoder = device.createCommandEncoder({ label: 'test.matmul' });
      kernel.encode(encoder, shape, operandsGpu);
      device.queue.submit([encoder.finish()]);
      const got = await readF32(device, buffers.c, offsetC + extents.c + 5);
      const want = new Float32Array(extents.c);
      matmul(shape, a.subarray(offsetA), b.subarray(offsetB), want);
      for (let i = 0; i < offsetC; i++) expect(got[i]).toBe(sentinel);
      for (let i = offsetC + extents.c; i < got.length; i++) expect(got[i]).toBe(sentinel);
      let worst = 0;
      for (let i = 0; i < extents.c; i++) worst = Math.max(worst, Math.abs(got[offsetC + i]! - want[i]!));
      expect(worst).toBeLessThanOrEqual(tolerance(shape.k) * shape.k); // |a|, |b| < 1: S ≤ k
      for (const buffer of Object.values(buffers)) buffer.destroy();
    }
  });

  gpuTest('two plans recorded into one encoder keep their own parameters', async ({ gpu }) => {
    const { device } = gpu;
    const kernel = kernelFor(device);
    const x = randomArray(32 * 784, 1);
    const w1 = randomArray(784 * 128, 2);
    const w2 = randomArray(128 * 10, 3);
    const buffers = {
      x: uploadF32(device, x, 'test.x'),
      w1: uploadF32(device, w1, 'test.w1'),
      w2: uploadF32(device, w2, 'test.w2'),
      h: uploadF32(device, new Float32Array(32 * 128), 'test.h'),
      y: uploadF32(device, new Float32Array(32 * 10), 'test.y'),
    };
    const encoder = device.createCommandEncoder({ label: 'test.forward' });
    kernel.encode(encoder, { m: 32, n: 128, k: 784 }, { a: buffers.x, b: buffers.w1, c: buffers.h });
    kernel.encode(encoder, { m: 32, n: 10, k: 128 }, { a: buffers.h, b: buffers.w2, c: buffers.y });
    device.queue.submit([encoder.finish()]);
    const got = await readF32(device, buffers.y, 32 * 10);
    const h = new Float32Array(32 * 128);
    matmul({ m: 32, n: 128, k: 784 }, x, w1, h);
    const want = new Float32Array(32 * 10);
    matmul({ m: 32, n: 10, k: 128 }, h, w2, want);
    let worst = 0;
    for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i]! - want[i]!));
    expect(worst).toBeLessThanOrEqual(1e-2); // |y| ~ √128·√784/3 ≈ 100, two products' rounding
    for (const buffer of Object.values(buffers)) buffer.destroy();
  });

  describe('adversarial values', () => {
    const shapes: MatmulShape[] = [
      { m: 33, n: 31, k: 127, transA: true }, // scalar
      { m: 64, n: 64, k: 64, transB: true }, // vec4
      { m: 32, n: 128, k: 784 }, // split-K
    ];

    gpuTest('zeros give exact zeros, and β = 0 never reads C (NaN there is overwritten)', async ({ gpu }) => {
      const kernel = kernelFor(gpu.device);
      for (const shape of shapes) {
        const extents = matmulExtents(shape);
        const got = await kernel.run(
          shape,
          new Float32Array(extents.a),
          randomArray(extents.b, 1),
          new Float32Array(extents.c).fill(NaN),
        );
        expect(got.every((v) => v === 0)).toBe(true);
      }
    });

    gpuTest('entries of 1e±30 whose products are moderate', async ({ gpu }) => {
      const kernel = kernelFor(gpu.device);
      for (const shape of shapes) {
        const s = resolveMatmulShape(shape);
        const { a, b } = operands(s, 11);
        // Column p of op(A) is scaled by 10^(30σ_p) and row p of op(B) by 10^(−30σ_p), σ_p ∈ {−1, 0, 1}.
        const scale = (p: number): number => 10 ** (30 * ((p % 3) - 1));
        for (let i = 0; i < s.m; i++)
          for (let p = 0; p < s.k; p++) a[s.transA ? p * s.m + i : i * s.k + p]! *= scale(p);
        for (let p = 0; p < s.k; p++)
          for (let j = 0; j < s.n; j++) b[s.transB ? j * s.k + p : p * s.n + j]! /= scale(p);
        expect(await worstError(kernel, s, a, b), JSON.stringify(shape)).toBeLessThanOrEqual(tolerance(s.k));
      }
    });

    gpuTest(
      'uniformly huge (products ~1e34) and uniformly tiny (products ' +
        '~1e-30, clear of f32 subnormals that GPUs may flush) values',
      async ({ gpu }) => {
        const kernel = kernelFor(gpu.device);
        for (const shape of shapes) {
          for (const factor of [1e17, 1e-15]) {
            const { a, b } = operands(shape, 13);
            const error = await worstError(
              kernel,
              shape,
              a.map((v) => v * factor),
              b.map((v) => v * factor),
            );
            expect(error, `${factor} ${JSON.stringify(shape)}`).toBeLessThanOrEqual(tolerance(shape.k));
          }
        }
      },
    );

    gpuTest('mixed signs that cancel to 1e-4 of Σ|a||b|', async ({ gpu }) => {
      const kernel = kernelFor(gpu.device);
      for (const shape of shapes) {
        const s = resolveMatmulShape(shape);
        const { a, b } = operands(s, 17);
        const noise = randomArray(s.k * s.n, 19);
        // Pair column 2q+1 of op(A) with column 2q, and row 2q+1 of op(B) with −(1 + 1e-4·noise)·row 2q.
        for (let p = 1; p < s.k; p += 2) {
          for (let i = 0; i < s.m; i++)
            a[s.transA ? p * s.m + i : i * s.k + p] = a[s.transA ? (p - 1) * s.m + i : i * s.k + p - 1]!;
          for (let j = 0; j < s.n; j++) {
            const at = (row: number): number => (s.transB ? j * s.k + row : row * s.n + j);
            b[at(p)] = -b[at(p - 1)]! * (1 + 1e-4 * noise[p * s.n + j]!);
          }
        }
        expect(await worstError(kernel, s, a, b), JSON.stringify(shape)).toBeLessThanOrEqual(tolerance(s.k));
      }
    });
  });

  gpuTest('program choice: vec4 when aligned, split-K only for few tiles and long k', ({ gpu }) => {
    expect(matmulOptionsFor(gpu.device)).toEqual(
      gpu.adapterInfo.architecture === 'swiftshader' ? { maxWorkgroups: 4 } : {},
    );
    const choose = (shape: MatmulShape, offsets = { a: 0, b: 0, c: 0 }) =>
      chooseMatmulProgram(resolveMatmulShape(shape), offsets, { a: 1 << 20, b: 1 << 20, c: 1 << 20 });
    expect(choose({ m: 32, n: 128, k: 784 })).toEqual({ vec4: true, splits: 7, sliceK: 128 });
    expect(choose({ m: 784, n: 128, k: 32, transA: true })).toEqual({ vec4: true, splits: 1, sliceK: 32 });
    expect(choose({ m: 32, n: 10, k: 128 }).vec4).toBe(false); // n = 10
    expect(choose({ m: 30, n: 8, k: 8, transA: true }).vec4).toBe(false); // A's stored rows are m = 30 long
    expect(choose({ m: 32, n: 8, k: 8 }, { a: 0, b: 2, c: 0 }).vec4).toBe(false);
    expect(choose({ m: 512, n: 512, k: 512 }).splits).toBe(1);
    expect(choose({ m: 32, n: 32, k: 63 }).splits).toBe(1); // too short to split
    expect(gpu.device.limits.maxComputeWorkgroupStorageSize).toBeGreaterThanOrEqual(8192);
  });
});
