/**
 * shaders/dct.wgsl and the 2-D transform of kernels/dct.ts against the CPU
 * reference, core/linalg/dct.ts (dctMatrix, the definition, and dct2, the
 * fast transform; both Float64), on random and adversarial gradients.
 *
 * Tolerances (u = 2⁻²⁴):
 *  - basis: |D − D_ref| ≤ 2⁻²¹·√(2/n) per entry (8 u of the entries'
 *    scale): the angle is reduced exactly, so what is left is the f32
 *    rounding of φ = π·q/2n, of the polynomial and of αₖ (measured ≤ 2 u).
 *  - C = D_m G D_nᵀ: |C − C_ref| ≤ 2⁻²¹·‖G‖_F per entry (8 u). Two f32
 *    products of inner length n and m, whose rounding errors largely
 *    average out against ‖G‖_F (measured ≤ 5.4e-8, i.e. 0.9 u, at every
 *    shape). The products scale exactly, so 1e±30 gradients (whose
 *    squares would overflow or underflow f32) meet the same relative bound.
 */
import { describe, expect } from 'vitest';
import { dct2, dctMatrix } from '../../../core/linalg/dct';
import { uniformArray } from '../../../core/testing/seeded';
import { readF32, uploadF32 } from '../runtime/readback';
import { gpuTest } from '../testing/gpuTest';
import { DctKernel } from './dct';
import { MatmulKernel } from './matmul';

const BASIS_TOLERANCE = 2 ** -21;
const TRANSFORM_TOLERANCE = 2 ** -21;

describe('dct.wgsl on Dawn', () => {
  gpuTest('writes the orthonormal DCT-II basis for sizes 1, 2, 3, 10, 13, 128 and 784', async ({ gpu }) => {
    const matmul = new MatmulKernel(gpu.device);
    const dct = new DctKernel(gpu.device, matmul);
    try {
      for (const n of [1, 2, 3, 10, 13, 128, 784]) {
        const got = await readF32(gpu.device, dct.basis(n), n * n);
        const want = dctMatrix(n);
        let worst = 0;
        for (let i = 0; i < n * n; i++) worst = Math.max(worst, Math.abs(got[i]! - want[i]!));
        expect(worst, `n = ${n}`).toBeLessThanOrEqual(BASIS_TOLERANCE * Math.sqrt(2 / n));
        console.log(`basis ${n}: max |D − D_ref| = ${(worst / Math.sqrt(2 / n) / 2 ** -24).toFixed(2)} u·√(2/n)`);
      }
      expect(dct.basis(128)).toBe(dct.basis(128)); // made once per size
      expect(() => dct.basis(0)).toThrow(RangeError);
    } finally {
      dct.destroy();
      matmul.destroy();
    }
  });

  const cases: [string, number, number, Float32Array][] = [
    ['784×128 (MLP first layer)', 784, 128, uniformArray(784 * 128, 1)],
    ['128×10', 128, 10, uniformArray(1280, 2)],
    ['97×15 (prime and odd sizes)', 97, 15, uniformArray(97 * 15, 3)],
    ['1×128 (a bias)', 1, 128, uniformArray(128, 4)],
    ['33×1', 33, 1, uniformArray(33, 5)],
    ['zero 40×24', 40, 24, new Float32Array(960)],
    ['huge 40×24 at 1e30', 40, 24, uniformArray(960, 6).map((x) => x * 1e30)],
    ['tiny 40×24 at 1e-30', 40, 24, uniformArray(960, 7).map((x) => x * 1e-30)],
  ];
  gpuTest('transforms layers of every shape, at offsets in one buffer, as dct2', async ({ gpu }) => {
    const { device } = gpu;
    const matmul = new MatmulKernel(device);
    const dct = new DctKernel(device, matmul);
    // All cases packed in one flat buffer, as layers of a gradient are.
    const offsets: number[] = [];
    let total = 0;
    for (const [, rows, cols] of cases) {
      offsets.push(total);
      total += rows * cols;
    }
    const flat = new Float32Array(total);
    cases.forEach(([, , , g], i) => flat.set(g, offsets[i]!));
    const gradient = uploadF32(device, flat, 'DctTest.gradient');
    const coefficients = uploadF32(device, new Float32Array(total), 'DctTest.coefficients');
    const scratch = uploadF32(device, new Float32Array(784 * 128), 'DctTest.scratch');
    try {
      const encoder = device.createCommandEncoder({ label: 'DctTest.encoder' });
      cases.forEach(([, rows, cols], i) => {
        const plan = dct.plan(
          rows,
          cols,
          { buffer: gradient, offset: offsets[i]! },
          { buffer: coefficients, offset: offsets[i]! },
          { buffer: scratch, offset: 0 },
        );
        const pass = encoder.beginComputePass({ label: 'DctTest.pass' });
        plan.record(pass);
        pass.end();
      });
      device.queue.submit([encoder.finish()]);
      const got = await readF32(device, coefficients, total);
      cases.forEach(([name, rows, cols, g], i) => {
        const want = dct2(g, rows, cols);
        let norm = 0;
        for (const x of g) norm += x * x;
        norm = Math.sqrt(norm);
        let worst = 0;
        for (let e = 0; e < rows * cols; e++) worst = Math.max(worst, Math.abs(got[offsets[i]! + e]! - want[e]!));
        if (norm === 0) expect(worst, name).toBe(0);
        else expect(worst, name).toBeLessThanOrEqual(TRANSFORM_TOLERANCE * norm);
        console.log(`${name}: max |C − C_ref| = ${norm === 0 ? 0 : (worst / norm).toExponential(1)}·‖G‖_F`);
      });
    } finally {
      for (const buffer of [gradient, coefficients, scratch]) buffer.destroy();
      dct.destroy();
      matmul.destroy();
    }
  });
});
