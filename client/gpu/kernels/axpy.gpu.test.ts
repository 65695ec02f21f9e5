import { describe, expect } from 'vitest';
import { axpy } from '../../../core/linalg/axpy';
import { uniformArray as randomArray } from '../../../core/testing/seeded';
import { AxpyKernel } from './axpy';
import { readF32, uploadF32 } from '../runtime/readback';
import { gpuTest } from '../testing/gpuTest';

describe('axpy.wgsl on Dawn', () => {
  gpuTest('reports a real adapter', ({ gpu }) => {
    // A named adapter, and a device with the adapter's maxima rather than the spec's defaults: every real
    // adapter (SwiftShader: 1 GiB) binds more than the 128 MiB default storage buffer, and the runtime asks for it all.
    const { vendor, architecture, description } = gpu.adapterInfo;
    expect(`${vendor}${architecture}${description}`.trim()).not.toBe('');
    expect(gpu.device.limits.maxStorageBufferBindingSize).toBeGreaterThan(128 * 1024 * 1024);
    expect(gpu.device.limits.maxComputeWorkgroupStorageSize).toBeGreaterThanOrEqual(16384);
  });

  // 1 and 257 straddle the workgroup size; 70,000 × 256 needs the 2-D dispatch.
  for (const n of [1, 257, 1000, 70_000 * 256]) {
    gpuTest(`matches the CPU reference for n = ${n}`, async ({ gpu }) => {
      const { device } = gpu;
      const x = randomArray(n, 1);
      const y = randomArray(n, 2);
      const a = -0.375;
      const kernel = new AxpyKernel(device);
      const xBuffer = uploadF32(device, x, 'test.x');
      const yBuffer = uploadF32(device, y, 'test.y');
      const encoder = device.createCommandEncoder({ label: 'test.axpy' });
      kernel.encode(encoder, a, xBuffer, yBuffer, n);
      device.queue.submit([encoder.finish()]);
      const got = await readF32(device, yBuffer, n);
      axpy(a, x, y);
      let worst = 0;
      for (let i = 0; i < n; i++) worst = Math.max(worst, Math.abs(got[i]! - y[i]!));
      // One fused or two separate f32 roundings of values below 2: ≤ 2 ulp(2).
      expect(worst).toBeLessThanOrEqual(2 * 2 ** -22);
      xBuffer.destroy();
      yBuffer.destroy();
      kernel.destroy();
    });
  }
});
