/**
 * `npm run bench -- training`: runs client/bench/training.ts (client/bench/index.html?bench=training) in headless
 * Chromium (WebGPU on SwiftShader here; `--gpu native` for a real GPU) and
 * writes the time of one worker round of the default MLP, ours on GPU and
 * CPU against TF.js's WebGPU and CPU steps, into docs/benchmarks.md.
 * Options: --cycles N (the whole sequence N times, 3 by default), --rounds N
 * (timed rounds per scheme and backend), --steps N (timed TF.js steps),
 * --warmup N, --gpu native.
 */
import { cpus, totalmem } from 'node:os';
import type { RoundTiming, TrainingBenchResult } from '../../client/bench/training';
import { runBrowserBench } from './browser';
import { fmt, loadText, markdownTable, writeSection } from './report';

function option(args: readonly string[], name: string): string | undefined {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
}

const split = (t: RoundTiming) => `${fmt(t.computeMs)} / ${fmt(t.compressMs)} / ${fmt(t.encodeMs)}`;
const ratio = (slow: number, fast: number) => `${fmt(slow / fast)}×`;

/** Runs the training benchmark page and records its table. */
export async function benchTraining(): Promise<void> {
  const args = process.argv.slice(2);
  const native = option(args, '--gpu') === 'native';
  const query = new URLSearchParams({ tfjsflags: 'WEBGPU_CPU_HANDOFF_SIZE_THRESHOLD:0' });
  let command = `npm run bench -- training${native ? ' --gpu native' : ''}`;
  for (const name of ['cycles', 'rounds', 'steps', 'warmup'] as const) {
    const value = option(args, `--${name}`);
    if (value === undefined) continue;
    query.set(name, value);
    command += ` --${name} ${value}`;
  }
  const loadBefore = loadText();
  const started = Date.now();
  const result = await runBrowserBench<TrainingBenchResult>({
    bench: 'training',
    gpu: native ? 'native' : 'swiftshader',
    // TF.js reads its flags from the page address; setting this one after load has no effect in 4.22.
    query: query.toString().replaceAll('%3A', ':'),
  });
  const minutes = (Date.now() - started) / 60_000;
  const loadAfter = loadText();

  const gpuNoneMs = result.schemes.find((row) => row.scheme === 'none')?.gpu.totalMs ?? Number.NaN;
  const core = result.spectralCore;
  const coreLine =
    core === undefined
      ? 'No compressor measured where the core SVD of the device route runs on this adapter.'
      : `Core SVD of spectral ATOMO's device route on this adapter (measured once per adapter by the compressor of the 'side measured' row: median of a few timed compresses per side, after a warm-up): ` +
        `on the device ${fmt(core.deviceMs)} ms, on the host ${fmt(core.hostMs)} ms → **${core.core}**.`;
  const tfWebgpu = result.tfjs.find((t) => t.backend === 'webgpu');
  const tfCpu = result.tfjs.find((t) => t.backend === 'cpu');
  const table = markdownTable(
    [
      'scheme',
      'ours GPU round ms',
      'GPU compute / compress / encode ms',
      'ours CPU round ms',
      'CPU compute / compress / encode ms',
      'bytes per round',
      'GPU round / GPU round (none)',
      'GPU speed-up vs our CPU',
      'GPU speed-up vs TF.js WebGPU step',
      'GPU speed-up vs TF.js CPU step',
    ],
    result.schemes.map((row) => [
      row.scheme,
      fmt(row.gpu.totalMs),
      `${split(row.gpu)}${row.gpu.compressedOn === 'cpu' ? ' (gradient read back, compressed on CPU)' : ''}`,
      fmt(row.cpu.totalMs),
      split(row.cpu),
      String(row.gpu.bytes),
      ratio(row.gpu.totalMs, gpuNoneMs),
      ratio(row.cpu.totalMs, row.gpu.totalMs),
      tfWebgpu === undefined ? '—' : ratio(tfWebgpu.stepMs, row.gpu.totalMs),
      tfCpu === undefined ? '—' : ratio(tfCpu.stepMs, row.gpu.totalMs),
    ]),
  );
  const baselines = markdownTable(
    ['TF.js 4.22 backend', 'step ms', 'steps timed', 'loss first → last', 'our CPU round (none) speed-up'],
    result.tfjs.map((t) => {
      const ourCpu = result.schemes.find((row) => row.scheme === 'none')?.cpu.totalMs ?? Number.NaN;
      return [
        t.backend,
        fmt(t.stepMs),
        String(t.steps),
        `${fmt(t.firstLoss)} → ${fmt(t.lastLoss)}`,
        ratio(t.stepMs, ourCpu),
      ];
    }),
  );
  const drift = markdownTable(
    [
      'cycle',
      'ours GPU round (none) ms',
      'ours CPU round (none) ms',
      'TF.js WebGPU step ms',
      'TF.js CPU step ms',
      'GPU speed-up vs TF.js WebGPU',
    ],
    result.cycles.map((c, i) => [
      String(i + 1),
      fmt(c.gpuNoneMs),
      fmt(c.cpuNoneMs),
      fmt(c.tfjsWebgpuMs),
      fmt(c.tfjsCpuMs),
      ratio(c.tfjsWebgpuMs, c.gpuNoneMs),
    ]),
  );
  const cpu = cpus();
  const rounds = Math.min(...result.schemes.flatMap((row) => [row.gpu.rounds, row.cpu.rounds]));
  writeSection(
    'training',
    `## Training round (MLP 784-128-10, batch ${result.batchSize})

Command: \`${command}\`, ${new Date().toISOString().slice(0, 10)}, ${fmt(minutes)} min.
Machine: ${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${fmt(totalmem() / 2 ** 30)} GiB; load average (1 / 5 / 15 min) ${loadBefore} before, ${loadAfter} after — other jobs shared the cores.
Adapter: **${result.adapter}** in headless Chromium (${result.userAgent.match(/Chrome\/[\d.]+/)?.[0] ?? 'Chromium'}).

${result.cycles.length} cycles, each: every scheme (our GPU and CPU rounds alternating), then TF.js WebGPU, then TF.js CPU;
medians pool all cycles, and the last table shows each cycle's medians, i.e. how much the load moved them.
A round is core/training/workerRound.ts end to end on real MNIST digits: minibatch gather and upload, forward + backward,
compression, \`core/codec\` encoding (no SGD update: the aggregator applies it; between rounds, untimed, the weights take a
plain SGD step on the decoded estimate, so rounds follow a training run). ${result.warmup} warm-up rounds of each
per cycle (pipelines compiled in the first); times are medians of at least ${rounds} rounds each.
The TF.js step is forward + backward + SGD update (\`optimizer.minimize\`) of the same MLP from the same initial weights,
minibatches already on the device, forced by reading the loss back; ${result.warmup} warm-up steps, then the median.
WebGPU backend with \`WEBGPU_CPU_HANDOFF_SIZE_THRESHOLD\` 0; \`@tensorflow/tfjs-backend-cpu\` is pure JS.
Speed-ups are the other time over ours (> 1×: ours is faster, < 1×: slower).
Rows without a route are the defaults a tab gets (spectral ATOMO's host route from the read-back factors, Fourier ATOMO
on the CPU path); the device rows are options (client/gpu/compression/gpuCompressor.ts). "GPU round / GPU round (none)"
is the GPU round against the uncompressed one, both from this run. Left out: the old device route (batched Jacobi of the input factor,
then of V_aᵀG), replaced by the factored device route and no longer in the code, so not in the same run; pipeline
compilation (in the warm-up rounds).

${table}

${coreLine}

${baselines}

${drift}
`,
  );
  console.table(
    result.schemes.map((row) => ({
      scheme: row.scheme,
      gpuMs: row.gpu.totalMs,
      cpuMs: row.cpu.totalMs,
      tfjsWebgpuMs: tfWebgpu?.stepMs,
      tfjsCpuMs: tfCpu?.stepMs,
    })),
  );
}
