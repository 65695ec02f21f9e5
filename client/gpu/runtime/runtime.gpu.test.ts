import { describe, expect } from 'vitest';
import { AxpyKernel } from '../kernels/axpy';
import { LayerKernels } from '../kernels/layers';
import { SvdKernel } from '../kernels/svd';
import { dispatchOf, encodePass, gridForItems } from './dispatch';
import { PipelineCache } from './pipelines';
import { readF32, uploadF32 } from './readback';
import { chooseBackend, cpuRequestedByUrl, GpuUnavailableError, requestBrowserGpu, type GpuLostInfo } from './device';
import { BufferPool, sizeClass, StagingPool } from './pools';
import { GpuTimer } from './timer';
import { gpuTest } from '../testing/gpuTest';

/** A second Dawn instance, playing navigator.gpu (the fixture already installed Dawn's globals). */
async function dawnGpu(): Promise<GPU> {
  const { create } = await import('webgpu');
  return create([]);
}

/** A navigator.gpu whose adapter request finds nothing (blocklisted GPU). */
const gpuWithoutAdapter = { requestAdapter: () => Promise.resolve(null) } as unknown as GPU;

async function unavailable(promise: Promise<unknown>): Promise<GpuUnavailableError> {
  const error: unknown = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GpuUnavailableError);
  return error as GpuUnavailableError;
}

describe('GpuContext', () => {
  gpuTest(
    'Node and browser paths give the same shape, with the adapter limits and granted features',
    async ({ gpu }) => {
      expect(gpu.limits.maxStorageBufferBindingSize).toBe(gpu.device.limits.maxStorageBufferBindingSize);
      expect(gpu.limits.maxStorageBufferBindingSize).toBeGreaterThanOrEqual(128 * 2 ** 20);
      expect(gpu.limits.maxComputeWorkgroupStorageSize).toBeGreaterThanOrEqual(16 * 1024);
      expect(gpu.limits.maxStorageBuffersPerShaderStage).toBeGreaterThanOrEqual(8);
      expect(gpu.features.timestampQuery).toBe(gpu.device.features.has('timestamp-query'));
      expect(gpu.features.subgroups).toBe(gpu.device.features.has('subgroups'));
      expect(typeof gpu.adapterInfo.vendor).toBe('string');

      const browser = await requestBrowserGpu({ gpu: await dawnGpu(), label: 'test.browser' });
      expect(Object.keys(browser).sort()).toEqual(['adapterInfo', 'device', 'features', 'limits', 'lost']);
      expect(browser.limits).toEqual(gpu.limits);
      expect(browser.features).toEqual(gpu.features);
      browser.device.destroy();
    },
  );

  gpuTest('reports a lost device through the callback and the promise', async () => {
    const seen: GpuLostInfo[] = [];
    const ctx = await requestBrowserGpu({ gpu: await dawnGpu(), onLost: (info) => seen.push(info) });
    ctx.device.destroy();
    const info = await ctx.lost;
    expect(info.reason).toBe('destroyed');
    expect(seen).toEqual([info]);
  });

  gpuTest('explains a missing WebGPU: insecure page, unsupported browser, no adapter', async () => {
    const insecure = await unavailable(requestBrowserGpu({ gpu: null, secureContext: false }));
    expect(insecure.reason).toBe('insecure-context');
    expect(insecure.message).toMatch(/has no WebGPU/);
    expect(insecure.message).toMatch(/secure context/);
    const unsupported = await unavailable(requestBrowserGpu({ gpu: null, secureContext: true }));
    expect(unsupported.reason).toBe('unsupported');
    expect(unsupported.message).toMatch(/has no WebGPU/);
    const noAdapter = await unavailable(requestBrowserGpu({ gpu: gpuWithoutAdapter }));
    expect(noAdapter.reason).toBe('no-adapter');
    expect(noAdapter.message).toMatch(/no adapter/);
  });
});

describe('chooseBackend', () => {
  gpuTest('falls back to the CPU with the reason, or when forced', async () => {
    expect(await chooseBackend({ gpu: null, secureContext: false })).toEqual({
      kind: 'cpu',
      code: 'insecure-context',
      reason: expect.stringMatching(/secure context/) as unknown as string,
    });
    expect(await chooseBackend({ gpu: gpuWithoutAdapter })).toMatchObject({
      kind: 'cpu',
      reason: expect.stringMatching(/no adapter/),
    });
    expect(await chooseBackend({ forceCpu: true, gpu: null })).toMatchObject({
      kind: 'cpu',
      reason: expect.stringMatching(/forced/),
    });
    expect(await chooseBackend({ url: 'http://localhost:5173/?run=a&cpu', gpu: null })).toMatchObject({
      kind: 'cpu',
      reason: expect.stringMatching(/\?cpu/),
    });
    const backend = await chooseBackend({ url: 'http://localhost:5173/?cpu=0', gpu: await dawnGpu() });
    expect(backend.kind).toBe('webgpu');
    if (backend.kind === 'webgpu') backend.ctx.device.destroy();
  });

  gpuTest('reads ?cpu from the address', () => {
    expect(cpuRequestedByUrl('http://localhost/?cpu')).toBe(true);
    expect(cpuRequestedByUrl('http://localhost/?cpu=1')).toBe(true);
    expect(cpuRequestedByUrl('/worker?x=1&cpu=true')).toBe(true);
    expect(cpuRequestedByUrl('http://localhost/?cpu=0')).toBe(false);
    expect(cpuRequestedByUrl('http://localhost/?cpu=false')).toBe(false);
    expect(cpuRequestedByUrl('http://localhost/?gpu')).toBe(false);
  });
});

describe('BufferPool', () => {
  gpuTest('sizes requests by classes: powers of two from 256 B to 64 KiB, quarter octaves above', () => {
    expect(sizeClass(0)).toBe(256);
    expect(sizeClass(256)).toBe(256);
    expect(sizeClass(257)).toBe(512);
    expect(sizeClass(65_536)).toBe(65_536);
    expect(sizeClass(65_537)).toBe(81_920); // 2¹⁶ · 5/4
    expect(sizeClass(4_000_000)).toBe(4_194_304); // 2²¹ · 8/4
    expect(sizeClass(2_100_000)).toBe(2_621_440); // 2²¹ · 5/4
    for (let bytes = 1; bytes < 1e9; bytes = Math.ceil(bytes * 1.37)) {
      const size = sizeClass(bytes);
      expect(size).toBeGreaterThanOrEqual(bytes);
      if (bytes > 65_536) expect(size).toBeLessThanOrEqual(bytes * 1.25);
    }
    // Past the device's maximum, the exact size (multiple of 4) rather than a class that cannot exist.
    expect(sizeClass(1_000_000_001, 1_000_001_000)).toBe(1_000_000_004); // class 2³⁰ would not fit
    expect(() => sizeClass(-1)).toThrow(RangeError);
  });

  gpuTest('reuses a released buffer of the same class and usage, and only that', ({ gpu }) => {
    const pool = new BufferPool(gpu.device, 'test.pool');
    const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;
    const a = pool.acquire(1000, storage, 'a');
    expect(a.size).toBe(1024);
    expect(a.label).toBe('test.pool.a');
    pool.release(a);
    const b = pool.acquire(600, storage, 'b'); // same class (1024)
    expect(b).toBe(a);
    expect(b.label).toBe('test.pool.b');
    const c = pool.acquire(600, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST, 'c'); // other usage
    const d = pool.acquire(2000, storage, 'd'); // other class
    expect(c).not.toBe(a);
    expect(d).not.toBe(a);
    expect(pool.stats).toMatchObject({ created: 3, reused: 1, inUse: 3, free: 0, bytes: 1024 + 1024 + 2048 });
    expect(() => pool.release(gpu.device.createBuffer({ size: 4, usage: storage }))).toThrow(/not acquired/);
    pool.release(b);
    expect(() => pool.release(b)).toThrow(/released twice/);
    pool.release(c);
    pool.trim();
    expect(pool.stats).toMatchObject({ inUse: 1, free: 0, bytes: 2048 });
    pool.destroy();
    expect(pool.stats).toMatchObject({ inUse: 0, free: 0, bytes: 0 });
  });
});

describe('StagingPool', () => {
  gpuTest('reads back through one reused staging buffer, at offsets, several per submit', async ({ gpu }) => {
    const { device } = gpu;
    const staging = new StagingPool(device, 'test.staging');
    const data = Float32Array.from({ length: 1000 }, (_, i) => i * 0.5);
    const source = uploadF32(device, data, 'test.source');
    for (let k = 0; k < 20; k++) {
      const bytes = await staging.read(source, 4 * k, 4 * 10);
      expect(Array.from(new Float32Array(bytes))).toEqual(Array.from(data.subarray(k, k + 10)));
    }
    // Twenty sequential reads, one staging buffer.
    expect(staging.stats).toMatchObject({ created: 1, reused: 19, inUse: 0, free: 1 });
    // Two reads in one submit need two buffers; both come back to the pool.
    const encoder = device.createCommandEncoder({ label: 'test.twoReads' });
    const first = staging.encodeRead(encoder, source, 0, 16);
    const last = staging.encodeRead(encoder, source, 4 * 996, 16);
    device.queue.submit([encoder.finish()]);
    const [x, y] = await Promise.all([first.map(), last.map()]);
    expect(Array.from(new Float32Array(x))).toEqual([0, 0.5, 1, 1.5]);
    expect(Array.from(new Float32Array(y))).toEqual([498, 498.5, 499, 499.5]);
    expect(staging.stats).toMatchObject({ created: 2, inUse: 0, free: 2 });
    await expect(first.map()).rejects.toThrow(/mapped twice/);
    expect(new ArrayBuffer(0).byteLength).toBe((await staging.read(source, 0, 0)).byteLength);
    expect(() => staging.encodeRead(device.createCommandEncoder(), source, 2, 4)).toThrow(RangeError);
    source.destroy();
    staging.destroy();
  });
});

describe('GpuTimer', () => {
  const n = 1 << 18;
  const work = (gpu: { device: GPUDevice }) => {
    const kernel = new AxpyKernel(gpu.device);
    const x = uploadF32(gpu.device, new Float32Array(n).fill(1), 'test.x');
    const y = uploadF32(gpu.device, new Float32Array(n), 'test.y');
    return {
      record: (repeats: number) => (encoder: GPUCommandEncoder) => {
        for (let r = 0; r < repeats; r++) kernel.encode(encoder, 0.5, x, y, n);
      },
      destroy() {
        kernel.destroy();
        x.destroy();
        y.destroy();
      },
    };
  };

  gpuTest('times with GPU timestamps when the device has them', async ({ gpu }) => {
    expect(gpu.features.timestampQuery).toBe(true); // SwiftShader and Dawn offer it; a change here is news
    const timer = new GpuTimer(gpu, 'test.timer');
    expect(timer.usesTimestamps).toBe(true);
    const { record, destroy } = work(gpu);
    await timer.measure(record(1)); // warm-up: first dispatch compiles the shader
    const one = await timer.measure(record(1));
    const many = await timer.measure(record(32));
    expect(one.source).toBe('timestamp');
    expect(many.source).toBe('timestamp');
    // Real intervals of real work (an unwritten timestamp would read 0), each inside submit → done
    // (0.5 ms slack for clock granularity). How long they take is a benchmark's business.
    for (const timing of [one, many]) {
      expect(timing.ms).toBeGreaterThan(0);
      expect(timing.ms).toBeLessThanOrEqual(timing.wallMs + 0.5);
    }
    console.log(
      `axpy 2¹⁸: 1× ${one.ms.toFixed(2)} ms, 32× ${many.ms.toFixed(2)} ms (wall ${many.wallMs.toFixed(2)} ms)`,
    );
    destroy();
    timer.destroy();
  });

  gpuTest('falls back to wall time without timestamp-query', async ({ gpu }) => {
    const timer = new GpuTimer({ device: gpu.device, features: { ...gpu.features, timestampQuery: false } });
    expect(timer.usesTimestamps).toBe(false);
    const { record, destroy } = work(gpu);
    const timing = await timer.measure(record(4));
    expect(timing.source).toBe('wall');
    expect(timing.ms).toBe(timing.wallMs);
    expect(timing.ms).toBeGreaterThan(0);
    const running = timer.measure(record(1));
    await expect(timer.measure(record(1))).rejects.toThrow(/one measurement/);
    await running;
    expect((await timer.measure(record(1))).source).toBe('wall'); // still usable afterwards
    destroy();
    timer.destroy();
  });
});

describe('PipelineCache', () => {
  gpuTest(
    'compiles a kernel once per device, whichever host asks, and reports its override values',
    async ({ gpu }) => {
      const cache = PipelineCache.for(gpu.device);
      expect(PipelineCache.for(gpu.device)).toBe(cache);
      new SvdKernel(gpu.device);
      new LayerKernels(gpu.device);
      const before = cache.size;
      // Second hosts of the same kernels: no new pipeline.
      new SvdKernel(gpu.device);
      new LayerKernels(gpu.device);
      expect(cache.size).toBe(before);
      const code =
        'override WORKGROUP_SIZE: u32 = 64u;\n@group(0) @binding(0) var<storage, read_write> x: array<f32>;\n' +
        '@compute @workgroup_size(WORKGROUP_SIZE) fn ' +
        'main(@builtin(global_invocation_id) id: vec3<u32>) { x[id.x] = 1.0; }';
      const byDefault = cache.kernel({ label: 'Test.default', code });
      expect(byDefault.constants.WORKGROUP_SIZE).toBe(64);
      expect(cache.kernel({ label: 'Test.again', code })).toBe(byDefault);
      const set = cache.kernel({ label: 'Test.set', code, constants: { WORKGROUP_SIZE: 128 } });
      expect(set).not.toBe(byDefault);
      expect(set.constants.WORKGROUP_SIZE).toBe(128);
      expect(cache.size).toBe(before + 2);
      expect(() => cache.kernel({ label: 'Test.unknown', code, constants: { NO_SUCH: 1 } })).toThrow(
        /declares no override NO_SUCH/,
      );
      // The size the host reads is the size the pipeline runs with: 128 invocations per group write 128 × 2 floats.
      const x = uploadF32(gpu.device, new Float32Array(512), 'Test.x');
      const encoder = gpu.device.createCommandEncoder({ label: 'Test.encoder' });
      encodePass(encoder, 'Test.pass', [
        dispatchOf(gpu.device, set, 'Test.set', [x], gridForItems(gpu.device, set, 256)),
      ]);
      gpu.device.queue.submit([encoder.finish()]);
      const written = await readF32(gpu.device, x, 512);
      expect(written.subarray(0, 256).every((v) => v === 1)).toBe(true);
      expect(written.subarray(256).every((v) => v === 0)).toBe(true);
      x.destroy();
    },
  );
});
