/**
 * Kernel benchmark page (`npm run bench -- kernels`): our WGSL matmul vs
 * TensorFlow.js's WebGPU tf.matMul vs the CPU reference, our GPU SVD vs the
 * Float64 CPU Jacobi, and Bernoulli draws per second, all on this page's
 * adapter in one run. Publishes `window.benchResult`.
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-webgpu';
import { matmul as cpuMatmul, type MatmulShape } from '../../core/linalg/matmul';
import { randomMatrix } from '../../core/linalg/random-matrix';
import { svdJacobi } from '../../core/linalg/svd';
import { bernoulli, randomBits, type StreamId } from '../../core/rng';
import { BernoulliKernel } from '../gpu/kernels/bernoulli';
import { MatmulKernel } from '../gpu/kernels/matmul';
import { uploadF32 } from '../gpu/runtime/readback';
import { requestBrowserGpu } from '../gpu/runtime/device';
import { svdBatched } from '../gpu/kernels/svd';
import { benchHost, log, msPerCall, type BenchHost } from './timing';

export interface MatmulRow {
  readonly name: string;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly oursMs: number;
  readonly tfjsMs: number;
  readonly cpuMs: number;
}

export interface SvdRow {
  readonly name: string;
  readonly gpuMs: number;
  readonly cpuMs: number;
  readonly sweeps: string;
  readonly relativeError: number;
}

/** The kernel benchmark's tables, the adapter's limits, and where it ran. */
export interface KernelBenchResult extends BenchHost {
  readonly limits: Record<string, number>;
  readonly matmul: readonly MatmulRow[];
  readonly svd: readonly SvdRow[];
  readonly bernoulli: { readonly n: number; readonly gpuDrawsPerSecond: number; readonly cpuDrawsPerSecond: number };
}

function randomF32(length: number, seed: number): Float32Array {
  const out = new Float32Array(length);
  const stream: StreamId = { seed, worker: 0, round: 0, layer: 0 };
  for (let i = 0; i < length; i++) out[i] = (randomBits(stream, i) >>> 8) / 0x800000 - 1;
  return out;
}

const MATMUL_CASES: readonly (MatmulShape & { name: string })[] = [
  { name: '128³', m: 128, n: 128, k: 128 },
  { name: '256³', m: 256, n: 256, k: 256 },
  { name: '512³', m: 512, n: 512, k: 512 },
  { name: '1024³', m: 1024, n: 1024, k: 1024 },
  { name: 'MLP fwd 32×784·784×128', m: 32, n: 128, k: 784 },
  { name: 'MLP fwd 32×128·128×10', m: 32, n: 10, k: 128 },
  { name: 'MLP dW₁ = Xᵀ·Δ (784×32·32×128)', m: 784, n: 128, k: 32, transA: true },
  { name: 'MLP dX₁ = Δ·W₂ᵀ (32×10·10×128)', m: 32, n: 128, k: 10, transB: true },
];

async function benchMatmul(device: GPUDevice): Promise<MatmulRow[]> {
  const kernel = new MatmulKernel(device);
  const rows: MatmulRow[] = [];
  for (const c of MATMUL_CASES) {
    const { m, n, k } = c;
    const a = randomF32(m * k, 1);
    const b = randomF32(k * n, 2);
    const aBuffer = uploadF32(device, a, 'Bench.a');
    const bBuffer = uploadF32(device, b, 'Bench.b');
    const cBuffer = uploadF32(device, new Float32Array(m * n), 'Bench.c');
    const plan = kernel.plan(c, { a: aBuffer, b: bBuffer, c: cBuffer });
    const oursMs = await msPerCall(async (reps) => {
      const encoder = device.createCommandEncoder({ label: 'Bench.matmul' });
      const pass = encoder.beginComputePass({ label: 'Bench.matmulPass' });
      for (let r = 0; r < reps; r++) plan.record(pass);
      pass.end();
      device.queue.submit([encoder.finish()]);
      await device.queue.onSubmittedWorkDone();
    });

    // TF.js: the same shapes as stored (transposes as flags), results forced with data().
    const ta = tf.tensor2d(a, c.transA === true ? [k, m] : [m, k]);
    const tb = tf.tensor2d(b, c.transB === true ? [n, k] : [k, n]);
    const tfjsMs = await msPerCall(async (reps) => {
      let last: tf.Tensor | null = null;
      for (let r = 0; r < reps; r++) {
        last?.dispose();
        last = tf.matMul(ta, tb, c.transA === true, c.transB === true);
      }
      await last!.data();
      last!.dispose();
    });
    ta.dispose();
    tb.dispose();

    const out = new Float32Array(m * n);
    const cpuMs =
      m * n * k > 64e6
        ? Number.NaN
        : await msPerCall(
            async (reps) => {
              for (let r = 0; r < reps; r++) cpuMatmul(c, a, b, out);
            },
            200,
            3,
          );

    rows.push({ name: c.name, m, n, k, oursMs, tfjsMs, cpuMs });
    log(`matmul ${c.name}: ours ${oursMs.toFixed(3)} ms, tf.js ${tfjsMs.toFixed(3)} ms, cpu ${cpuMs.toFixed(3)} ms`);
    plan.destroy();
    aBuffer.destroy();
    bBuffer.destroy();
    cBuffer.destroy();
  }
  kernel.destroy();
  return rows;
}

/** ‖A − UΣVᵀ‖F / ‖A‖F with U, V stored column by column (atom t at [t·rows, …)). */
function reconstructionError(
  a: Float32Array,
  rows: number,
  cols: number,
  u: Float32Array,
  s: Float32Array,
  v: Float32Array,
): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      let sum = 0;
      for (let t = 0; t < s.length; t++) sum += u[t * rows + i]! * s[t]! * v[t * cols + j]!;
      const x = a[i * cols + j]!;
      num += (x - sum) ** 2;
      den += x * x;
    }
  }
  return den === 0 ? 0 : Math.sqrt(num / den);
}

async function benchSvd(device: GPUDevice): Promise<SvdRow[]> {
  // One MLP step's layer gradients at batch 32: dW₁ = Xᵀ·Δ₁ (rank ≤ 32), db₁, dW₂, db₂.
  const x = randomF32(32 * 784, 3).map((value) => Math.max(0, value));
  const delta1 = randomF32(32 * 128, 4);
  const delta2 = randomF32(32 * 10, 5);
  const dW1 = new Float32Array(784 * 128);
  cpuMatmul({ m: 784, n: 128, k: 32, transA: true }, x, delta1, dW1);
  const hidden = randomF32(32 * 128, 6).map((value) => Math.max(0, value));
  const dW2 = new Float32Array(128 * 10);
  cpuMatmul({ m: 128, n: 10, k: 32, transA: true }, hidden, delta2, dW2);
  const step = [
    { data: dW1, rows: 784, cols: 128 },
    { data: randomF32(128, 7), rows: 1, cols: 128 },
    { data: dW2, rows: 128, cols: 10 },
    { data: randomF32(10, 8), rows: 1, cols: 10 },
  ];
  const randoms = Array.from({ length: 64 }, (_, i) => ({
    data: new Float32Array(randomMatrix(64, 64, 100 + i)),
    rows: 64,
    cols: 64,
  }));
  const rows: SvdRow[] = [];
  for (const [name, batch] of [
    ['one MLP step (784×128, 1×128, 128×10, 1×10)', step],
    ['64 random 64×64', randoms],
  ] as const) {
    await svdBatched(device, batch); // compile the pipelines
    let start = performance.now();
    const gpu = await svdBatched(device, batch);
    const gpuMs = performance.now() - start;
    start = performance.now();
    for (const matrix of batch) svdJacobi(matrix.data, matrix.rows, matrix.cols);
    const cpuMs = performance.now() - start;
    const errors = gpu.map((r, i) => reconstructionError(batch[i]!.data, r.rows, r.cols, r.u, r.singularValues, r.v));
    const sweeps = gpu.map((r) => r.sweeps);
    rows.push({
      name,
      gpuMs,
      cpuMs,
      sweeps: `${Math.min(...sweeps)}–${Math.max(...sweeps)}`,
      relativeError: Math.max(...errors),
    });
    log(`svd ${name}: gpu ${gpuMs.toFixed(1)} ms, cpu ${cpuMs.toFixed(1)} ms`);
  }
  return rows;
}

async function benchBernoulli(device: GPUDevice): Promise<KernelBenchResult['bernoulli']> {
  const n = 1 << 20;
  const probabilities = randomF32(n, 9).map((value) => Math.abs(value) * 0.01);
  const kernel = new BernoulliKernel(device);
  const stream: StreamId = { seed: 1, worker: 0, round: 0, layer: 0 };
  const gpuMs = await msPerCall(
    async (reps) => {
      for (let r = 0; r < reps; r++) await kernel.sample({ ...stream, round: r }, probabilities);
    },
    500,
    3,
  );
  const cpuMs = await msPerCall(
    async (reps) => {
      let kept = 0;
      for (let r = 0; r < reps; r++) {
        const roundStream = { ...stream, round: r };
        for (let i = 0; i < n; i++) if (bernoulli(randomBits(roundStream, i), probabilities[i]!)) kept++;
      }
      if (kept < 0) throw new Error('unreachable');
    },
    500,
    3,
  );
  kernel.destroy();
  log(`bernoulli: gpu ${(n / gpuMs / 1e3).toFixed(2)} M/s, cpu ${(n / cpuMs / 1e3).toFixed(2)} M/s`);
  return { n, gpuDrawsPerSecond: (n / gpuMs) * 1e3, cpuDrawsPerSecond: (n / cpuMs) * 1e3 };
}

/** Runs the benchmark in this page and returns its tables. */
export async function main(): Promise<KernelBenchResult> {
  const ctx = await requestBrowserGpu({ label: 'bench' });
  await tf.setBackend('webgpu');
  await tf.ready();
  const host = benchHost(ctx.adapterInfo);
  log(`adapter: ${host.adapter}; tf.js backend: ${tf.getBackend()}`);
  const limits: Record<string, number> = {};
  for (const name of [
    'maxComputeWorkgroupStorageSize',
    'maxStorageBuffersPerShaderStage',
    'maxStorageBufferBindingSize',
    'maxComputeInvocationsPerWorkgroup',
  ] as const) {
    limits[name] = ctx.device.limits[name];
  }
  const only = new URLSearchParams(location.search).get('only');
  const want = (part: string) => only === null || only.split(',').includes(part);
  const matmul = want('matmul') ? await benchMatmul(ctx.device) : [];
  const svd = want('svd') ? await benchSvd(ctx.device) : [];
  const draws = want('bernoulli')
    ? await benchBernoulli(ctx.device)
    : { n: 0, gpuDrawsPerSecond: Number.NaN, cpuDrawsPerSecond: Number.NaN };
  return { ...host, limits, matmul, svd, bernoulli: draws };
}
