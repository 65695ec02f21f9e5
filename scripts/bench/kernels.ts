/**
 * `npm run bench -- kernels`: runs client/bench/kernels.ts (client/bench/index.html?bench=kernels) in headless
 * Chromium (WebGPU on SwiftShader here; `--gpu native` for a real GPU) and
 * writes its section of docs/benchmarks.md.
 */
import type { KernelBenchResult } from '../../client/bench/kernels';
import { runBrowserBench } from './browser';
import { fmt, writeSection } from './report';

const gflops = (m: number, n: number, k: number, ms: number) => (2 * m * n * k) / (ms * 1e6);

/** Runs the kernel benchmark page and records its tables. */
export async function benchKernels(): Promise<void> {
  const args = process.argv.slice(2);
  const native = args.includes('--gpu') && args[args.indexOf('--gpu') + 1] === 'native';
  const onlyIndex = args.indexOf('--only');
  const only = onlyIndex >= 0 ? args[onlyIndex + 1] : undefined;
  const result = await runBrowserBench<KernelBenchResult>({
    bench: 'kernels',
    gpu: native ? 'native' : 'swiftshader',
    // TF.js reads its flags from the page address; setting this one after load has no effect in 4.22.
    query: `tfjsflags=WEBGPU_CPU_HANDOFF_SIZE_THRESHOLD:0${only === undefined ? '' : `&only=${only}`}`,
  });

  // One table: every kernel against the baseline it replaces, measured in the same page.
  const rows = [
    ...result.matmul.map((r) => [
      `matmul ${r.name}`,
      `${fmt(r.oursMs)} ms`,
      'TF.js WebGPU',
      `${fmt(r.tfjsMs)} ms`,
      `${fmt(r.tfjsMs / r.oursMs)}×`,
      `${fmt(gflops(r.m, r.n, r.k, r.oursMs))} GFLOP/s (CPU reference ${fmt(gflops(r.m, r.n, r.k, r.cpuMs))})`,
    ]),
    ...result.svd.map((r) => [
      `SVD, ${r.name}`,
      `${fmt(r.gpuMs)} ms`,
      'CPU Float64 Jacobi',
      `${fmt(r.cpuMs)} ms`,
      `${fmt(r.cpuMs / r.gpuMs)}×`,
      `${r.sweeps} sweeps, ‖A − UΣVᵀ‖F/‖A‖F ≤ ${r.relativeError.toExponential(1)}`,
    ]),
    [
      `Bernoulli draws, n = ${result.bernoulli.n}`,
      `${fmt(result.bernoulli.gpuDrawsPerSecond / 1e6)} M/s`,
      'CPU core/rng',
      `${fmt(result.bernoulli.cpuDrawsPerSecond / 1e6)} M/s`,
      `${fmt(result.bernoulli.gpuDrawsPerSecond / result.bernoulli.cpuDrawsPerSecond)}×`,
      'compaction and read-back included',
    ],
  ];
  const limits = Object.entries(result.limits)
    .map(([name, value]) => `${name} ${value}`)
    .join(', ');
  const browser = result.userAgent.match(/Chrome\/[\d.]+/)?.[0] ?? 'Chromium';
  writeSection('kernels', {
    title: 'Kernels',
    command: `npm run bench -- kernels${native ? ' --gpu native' : ''}`,
    on: `**${result.adapter}** in headless Chromium (${browser})`,
    how: [
      'Each kernel on the adapter against its baseline in the same page; times are medians of 5 batches, each sized to',
      'last ~0.3 s, all dispatches of a batch in one submit. TF.js ' +
        '4.22 WebGPU with `WEBGPU_CPU_HANDOFF_SIZE_THRESHOLD` 0,',
      `its result forced with \`data()\`. Speed-up: the baseline's time over ours. Adapter limits: ${limits}.`,
    ],
    header: ['kernel', 'ours', 'baseline', 'baseline time', 'speed-up', 'note'],
    rows,
  });
  console.table(
    result.matmul.map((r) => ({ product: r.name, ours: r.oursMs, tfjs: r.tfjsMs, speedup: r.tfjsMs / r.oursMs })),
  );
}
