import { describe, expect } from 'vitest';
import { bernoulli, bernoulliThreshold, philox4x32, randomBits, type StreamId } from '../../../core/rng';
import { BernoulliKernel } from './bernoulli';
import { CompactKernel } from './compact';
import { BufferPool, StagingPool } from '../runtime/pools';
import { GpuTimer } from '../runtime/timer';
import { PhiloxProbe, type PhiloxInput } from '../testing/philoxProbe';
import { gpuTest } from '../testing/gpuTest';

const hex = (words: ArrayLike<number>) => Array.from(words, (w) => w.toString(16).padStart(8, '0'));

/** xorshift32: test inputs only; the statistics under test come from Philox. */
function xorshift(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s;
  };
}

/** The CPU reference draw (core/rng): keep mask words and kept indices, for f32 probabilities. */
function cpuDraw(stream: StreamId, p: Float32Array): { mask: Uint32Array; kept: number[] } {
  const mask = new Uint32Array(Math.ceil(p.length / 32));
  const kept: number[] = [];
  for (let i = 0; i < p.length; i++) {
    if (bernoulli(randomBits(stream, i), p[i]!)) {
      mask[i >>> 5]! |= 1 << (i & 31);
      kept.push(i);
    }
  }
  return { mask, kept };
}

/** Where two index lists first differ (-1: equal). toEqual on 10⁶ elements takes seconds; this takes milliseconds. */
function firstDifference(got: ArrayLike<number>, want: ArrayLike<number>): number {
  const n = Math.max(got.length, want.length);
  for (let i = 0; i < n; i++) if (got[i] !== want[i]) return i;
  return -1;
}

function floatFromBits(bits: number): number {
  const u = new Uint32Array([bits]);
  return new Float32Array(u.buffer)[0]!;
}

const stream: StreamId = { seed: 0x5eed, worker: 7, round: 3, layer: 2 };

describe('common/philox.wgsl', () => {
  gpuTest('matches the three Random123 known answers', async ({ gpu }) => {
    const probe = new PhiloxProbe(gpu.device);
    const inputs: PhiloxInput[] = [
      { counter: [0, 0, 0, 0], key: [0, 0] },
      { counter: [0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff], key: [0xffffffff, 0xffffffff] },
      { counter: [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], key: [0xa4093822, 0x299f31d0] },
    ];
    const out = await probe.philox(inputs);
    expect(hex(out.subarray(0, 4))).toEqual(['6627e8d5', 'e169c58d', 'bc57ac4c', '9b00dbd8']);
    expect(hex(out.subarray(4, 8))).toEqual(['408f276d', '41c83b0e', 'a20bc7c6', '6d5451fd']);
    expect(hex(out.subarray(8, 12))).toEqual(['d16cfe09', '94fdcceb', '5001e420', '24126ea1']);
    probe.destroy();
  });

  gpuTest('gives the CPU bits for one key over many counters, edges 0 and 0xffffffff included', async ({ gpu }) => {
    const probe = new PhiloxProbe(gpu.device);
    const next = xorshift(99);
    const key = [0x5eed, 7] as const;
    const inputs: PhiloxInput[] = [];
    // Every counter whose words are each 0 or 0xffffffff (16), under four edge keys.
    for (const k of [key, [0, 0], [0xffffffff, 0xffffffff], [0, 0xffffffff]] as const) {
      for (let m = 0; m < 16; m++) {
        const w = (bit: number) => ((m >> bit) & 1 ? 0xffffffff : 0);
        inputs.push({ counter: [w(0), w(1), w(2), w(3)], key: k });
      }
    }
    // Stream-shaped counters (index, round, layer, 0) and fully random ones.
    for (let i = 0; i < 4096; i++) inputs.push({ counter: [i, 3, 2, 0], key });
    for (let i = 0; i < 4096; i++) inputs.push({ counter: [next(), next(), next(), next()], key });
    const out = await probe.philox(inputs);
    const expected = new Uint32Array(inputs.length * 4);
    inputs.forEach(({ counter, key: k }, i) => philox4x32(counter, k, expected.subarray(4 * i, 4 * i + 4)));
    expect(out).toEqual(expected);
    probe.destroy();
  });

  gpuTest('philoxMulWide gives the exact 64-bit product on edge and random values', async ({ gpu }) => {
    const probe = new PhiloxProbe(gpu.device);
    const next = xorshift(3);
    const values = [0, 1, 0xffff, 0x10000, 0x1ffff, 0xffffffff, 0xd2511f53, 0xcd9e8d57, 0x80000000, 0x7fffffff];
    for (let i = 0; i < 150; i++) values.push(next());
    const pairs = new Uint32Array(values.length * values.length * 2);
    values.forEach((a, i) => values.forEach((b, j) => pairs.set([a, b], 2 * (i * values.length + j))));
    const got = await probe.mulWide(pairs);
    const expected = new Uint32Array(pairs.length);
    for (let k = 0; k < pairs.length; k += 2) {
      const product = BigInt(pairs[k]!) * BigInt(pairs[k + 1]!);
      expected[k] = Number(product >> 32n);
      expected[k + 1] = Number(product & 0xffffffffn);
    }
    expect(got).toEqual(expected);
    probe.destroy();
  });

  gpuTest('computes bernoulliThreshold exactly for f32 values (ties, subnormals, ±0, ∞, NaN)', async ({ gpu }) => {
    const probe = new PhiloxProbe(gpu.device);
    const next = xorshift(5);
    const bits: number[] = [
      0x7fc00000, 0xffc00000, 0x7f800001, 0x7f800000, 0xff800000, 0x80000000, 0x80000001, 0xbf800000,
    ];
    // Every exponent and sign, with mantissas at and around the rounding tie of that exponent.
    for (let sign = 0; sign < 2; sign++) {
      for (let exponent = 0; exponent < 256; exponent++) {
        const s = Math.max(0, Math.min(31, 126 - exponent));
        const tie = s > 0 && s <= 23 ? 1 << (s - 1) : 0;
        const mantissas = [
          0,
          1,
          2,
          0x7fffff,
          0x400000,
          tie,
          tie + 1,
          tie - 1,
          (tie * 3) & 0x7fffff,
          next() & 0x7fffff,
          next() & 0x7fffff,
        ];
        for (const m of mantissas) bits.push(((sign << 31) | (exponent << 23) | (m & 0x7fffff)) >>> 0);
      }
    }
    // Random f32 values in [0, 1].
    for (let i = 0; i < 100_000; i++) bits.push(next() % 0x3f800001);
    const p = new Float32Array(new Uint32Array(bits).buffer);
    const got = await probe.thresholds(p);
    const expected = Uint32Array.from(bits, (b) => bernoulliThreshold(floatFromBits(b)));
    expect(got).toEqual(expected);
    // The ties really are ties: p = 2⁻²⁵ is 0.5 · 2⁻²⁴, which rounds up (to even would give 0).
    expect(bernoulliThreshold(2 ** -25)).toBe(1);
    probe.destroy();
  });
});

describe('bernoulli.wgsl', () => {
  gpuTest('keeps exactly the atoms the CPU keeps, for random and edge probabilities', async ({ gpu }) => {
    const kernel = new BernoulliKernel(gpu.device);
    const next = xorshift(42);
    const n = 100_003;
    const edges = [0, 1, 2 ** -24, 2 ** -25, 2 ** -26, 3 * 2 ** -26, 1e-7, 1e-30, 1 - 2 ** -24, 0.5];
    const p = new Float32Array(n);
    const lambda = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      // One atom in four is an edge value; the rest uniform in [0, 1).
      p[i] = i % 4 === 0 ? edges[(i >>> 2) % edges.length]! : next() / 2 ** 32;
      lambda[i] = (next() / 2 ** 31 - 1) * 3;
    }
    const got = await kernel.sample(stream, p, lambda);
    const want = cpuDraw(stream, p);
    expect(got.keepMask).toEqual(want.mask);
    expect(got.indices.length).toBe(want.kept.length);
    expect(firstDifference(got.indices, want.kept)).toBe(-1);
    // λᵢ / pᵢ within WGSL's 2.5 ulp division (checked at 3 ulp of the f32 result).
    expect(got.values).not.toBeNull();
    let worstUlps = 0;
    got.indices.forEach((i, j) => {
      const exact = lambda[i]! / p[i]!;
      const ulp = 2 ** (Math.floor(Math.log2(Math.abs(exact))) - 23);
      worstUlps = Math.max(worstUlps, Math.abs(got.values![j]! - exact) / ulp);
    });
    expect(worstUlps).toBeLessThanOrEqual(3);
    // p = 0 never kept, p = 1 always kept.
    for (let i = 0; i < n; i += 4) {
      const keptHere = (want.mask[i >>> 5]! >>> (i & 31)) & 1;
      if (p[i] === 0) expect(keptHere).toBe(0);
      if (p[i] === 1) expect(keptHere).toBe(1);
    }
    kernel.destroy();
  });

  gpuTest('keep frequencies per probability bucket pass z and χ² tests', async ({ gpu }) => {
    // Ten buckets of 100,000 atoms, one draw of 10⁶ atoms. Each bucket's count
    // K is Binomial(m, q) with q = threshold / 2²⁴ exactly (the integer test
    // keeps 24-bit uniforms below the threshold), so z = (K − mq)/√(mq(1 − q))
    // is close to standard normal. χ² = Σ z² has 10 degrees of freedom (the
    // buckets are independent); its upper tail for even k is the closed form
    // e^(−x/2) Σ_{j<k/2} (x/2)^j / j!. We require p-value > 1e-6 and every
    // |z| < 5.3 (two-sided 1.2e-7 each): a correct generator fails one of them
    // for about 1 seed in 10⁶. The seed is fixed, so the test is
    // deterministic; the levels say how unlucky a fixed seed would have to be.
    const kernel = new BernoulliKernel(gpu.device);
    const buckets = [0.0005, 0.003, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.999];
    const m = 100_000;
    const p = new Float32Array(buckets.length * m);
    // Interleave buckets so each spans the whole index range (and all workgroups).
    for (let i = 0; i < p.length; i++) p[i] = buckets[i % buckets.length]!;
    const got = await kernel.sample({ seed: 2024, worker: 1, round: 0, layer: 0 }, p);
    const counts = new Array<number>(buckets.length).fill(0);
    for (const i of got.indices) counts[i % buckets.length]!++;
    let chi2 = 0;
    buckets.forEach((pb, b) => {
      const q = bernoulliThreshold(Math.fround(pb)) / 2 ** 24;
      const z = (counts[b]! - m * q) / Math.sqrt(m * q * (1 - q));
      expect(Math.abs(z), `bucket p = ${pb}: z`).toBeLessThan(5.3);
      chi2 += z * z;
    });
    const half = chi2 / 2;
    let term = 1;
    let sum = 0;
    for (let j = 0; j < buckets.length / 2; j++) {
      sum += term;
      term *= half / (j + 1);
    }
    const pValue = Math.exp(-half) * sum;
    expect(pValue, `χ² = ${chi2.toFixed(2)} on ${buckets.length} d.f.`).toBeGreaterThan(1e-6);
    kernel.destroy();
  });

  gpuTest(
    'gives the same stream for the same id and a fresh one for another round, layer, worker or seed',
    async ({ gpu }) => {
      const kernel = new BernoulliKernel(gpu.device);
      const n = 8192;
      const p = new Float32Array(n).fill(0.5);
      const base = (await kernel.sample(stream, p)).keepMask;
      expect((await kernel.sample({ ...stream }, p)).keepMask).toEqual(base);
      const others: StreamId[] = [
        { ...stream, round: stream.round + 1 },
        { ...stream, layer: stream.layer + 1 },
        { ...stream, worker: stream.worker + 1 },
        { ...stream, seed: stream.seed + 1 },
      ];
      for (const other of others) {
        const mask = (await kernel.sample(other, p)).keepMask;
        // Independent fair coins agree on n/2 atoms, sd √n/2 ≈ 45; 6 sd allows ±272.
        let agree = 0;
        for (let w = 0; w < mask.length; w++) {
          let same = ~(mask[w]! ^ base[w]!) >>> 0;
          while (same !== 0) {
            same &= same - 1;
            agree++;
          }
        }
        expect(Math.abs(agree - n / 2), JSON.stringify(other)).toBeLessThan((6 * Math.sqrt(n)) / 2);
      }
      kernel.destroy();
    },
  );

  gpuTest('keeps about 1% of 2²⁰ atoms at p = 0.01 through the pooled, timed path (within 6σ)', async ({ gpu }) => {
    const n = 1 << 20;
    const kernel = new BernoulliKernel(gpu.device);
    const timer = new GpuTimer(gpu);
    const pool = new BufferPool(gpu.device, 'test');
    const p = pool.acquire(n * 4, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST, 'p');
    gpu.device.queue.writeBuffer(p, 0, new Float32Array(n).fill(0.01));
    const job = kernel.createJob(n, { pool });
    const timing = await timer.measure((encoder) => kernel.encode(encoder, job, stream, p, n));
    const { indices } = await kernel.read(job, n * 0.01 + 2000);
    expect(Math.abs(indices.length - n * 0.01)).toBeLessThan(6 * Math.sqrt(n * 0.01));
    // Timed on the GPU's own clock, inside submit → done; speed itself is measured by npm run bench -- kernels.
    expect(timing.source).toBe('timestamp');
    expect(timing.ms).toBeGreaterThan(0);
    expect(timing.ms).toBeLessThanOrEqual(timing.wallMs + 0.5);
    job.destroy();
    pool.destroy();
    timer.destroy();
    kernel.destroy();
  });
});

describe('compact/*.wgsl', () => {
  type MaskCase = { name: string; n: number; density: number };
  const cases: MaskCase[] = [
    { name: 'n = 0', n: 0, density: 0.5 },
    { name: 'n = 1, kept', n: 1, density: 1 },
    { name: 'n = 1, not kept', n: 1, density: 0 },
    { name: 'n = 255', n: 255, density: 0.3 },
    { name: 'n = 256', n: 256, density: 0.3 },
    { name: 'n = 257', n: 257, density: 0.3 },
    { name: 'n = 8193', n: 8193, density: 0.5 },
    { name: 'n = 65,537 (257 blocks: runs of 2 blocks per invocation in the offsets pass)', n: 65_537, density: 0.5 },
    { name: 'n = 10⁶', n: 1_000_000, density: 0.1 },
    { name: 'n = 10⁶, all kept', n: 1_000_000, density: 1 },
    { name: 'n = 10⁶, none kept', n: 1_000_000, density: 0 },
  ];
  for (const { name, n, density } of cases) {
    gpuTest(`lists the set bits in order for ${name}, density ${density}`, async ({ gpu }) => {
      const { device } = gpu;
      const compact = new CompactKernel(device);
      const staging = new StagingPool(device, 'test.staging');
      const next = xorshift(n + 17);
      // One spare word past the end, and garbage in the bits past n: the kernel must ignore both.
      const words = new Uint32Array(Math.ceil(n / 32) + 1);
      const kept: number[] = [];
      for (let i = 0; i < words.length * 32; i++) {
        const on = i >= n ? next() % 2 === 0 : density === 1 || (density > 0 && next() / 2 ** 32 < density);
        if (on) words[i >>> 5]! |= 1 << (i & 31);
        if (on && i < n) kept.push(i);
      }
      const mask = device.createBuffer({
        label: 'test.mask',
        size: words.byteLength,
        usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST,
      });
      device.queue.writeBuffer(mask, 0, words);
      const job = compact.createJob(n, { label: 'test.compact' });
      const encoder = device.createCommandEncoder({ label: 'test.compact' });
      compact.encode(encoder, mask, n, job);
      device.queue.submit([encoder.finish()]);
      const { indices } = await compact.read(job, staging, kept.length);
      expect(indices.length).toBe(kept.length);
      expect(firstDifference(indices, kept)).toBe(-1);
      // A too-small expected count costs a second read-back, not a wrong answer.
      if (kept.length > 1) {
        const again = await compact.read(job, staging, Math.floor(kept.length / 3));
        expect(again.indices.length).toBe(kept.length);
        expect(firstDifference(again.indices, kept)).toBe(-1);
      }
      mask.destroy();
      job.destroy();
      staging.destroy();
    });
  }
});
