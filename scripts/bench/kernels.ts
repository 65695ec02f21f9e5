/**
 * `npm run bench -- kernels`: runs client/bench/kernels.ts (client/bench/index.html?bench=kernels) in headless
 * Chromium (WebGPU on SwiftShader here; `--gpu native` for a real GPU) and
 * writes the tables into docs/benchmarks.md.
 */
import type { KernelBenchResult } from '../../client/bench/kernels';
import { runBrowserBench } from './browser';
import { fmt, markdownTable, writeSection } from './report';

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

  const matmul = markdownTable(
    ['product', 'ours ms', 'ours GFLOP/s', 'TF.js ms', 'TF.js GFLOP/s', 'CPU ref GFLOP/s', 'ours / TF.js speed-up'],
    result.matmul.map((r) => [
      r.name,
      fmt(r.oursMs),
      fmt(gflops(r.m, r.n, r.k, r.oursMs)),
      fmt(r.tfjsMs),
      fmt(gflops(r.m, r.n, r.k, r.tfjsMs)),
      fmt(gflops(r.m, r.n, r.k, r.cpuMs)),
      `${fmt(r.tfjsMs / r.oursMs)}×`,
    ]),
  );
  const svd = markdownTable(
    ['batch', 'GPU ms', 'CPU Float64 Jacobi ms', 'GPU / CPU speed-up', 'sweeps', 'max ‖A − UΣVᵀ‖F/‖A‖F'],
    result.svd.map((r) => [
      r.name,
      fmt(r.gpuMs),
      fmt(r.cpuMs),
      `${fmt(r.cpuMs / r.gpuMs)}×`,
      r.sweeps,
      r.relativeError.toExponential(1),
    ]),
  );
  const b = result.bernoulli;
  const draws = markdownTable(
    ['n', 'GPU draws/s (incl. compaction + read-back)', 'CPU core/rng draws/s'],
    [[String(b.n), `${fmt(b.gpuDrawsPerSecond / 1e6)} M`, `${fmt(b.cpuDrawsPerSecond / 1e6)} M`]],
  );
  const limits = Object.entries(result.limits)
    .map(([name, value]) => `${name} ${value}`)
    .join(', ');
  writeSection(
    'kernels',
    `## Kernels

Command: \`npm run bench -- kernels${native ? ' --gpu native' : ''}\`, ${new Date().toISOString().slice(0, 10)}.
Adapter: **${result.adapter}** in headless Chromium (${result.userAgent.match(/Chrome\/[\d.]+/)?.[0] ?? 'Chromium'}); limits: ${limits}.
Times are medians of 5 batches, each batch sized to last ~0.3 s, all dispatches of a batch in one submit;
TF.js 4.22 WebGPU backend with \`WEBGPU_CPU_HANDOFF_SIZE_THRESHOLD\` 0, its result forced with \`data()\`.

### Matrix products

${matmul}

### SVD of layer gradients

${svd}

### Bernoulli sampling

${draws}
`,
  );
  console.table(
    result.matmul.map((r) => ({ product: r.name, ours: r.oursMs, tfjs: r.tfjsMs, speedup: r.tfjsMs / r.oursMs })),
  );
}
