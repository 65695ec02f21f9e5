/**
 * `npm run bench -- training`: runs client/bench/training.ts (client/bench/index.html?bench=training) in headless
 * Chromium (WebGPU on SwiftShader here; `--gpu native` for a real GPU) and
 * writes the time of one worker round of the default MLP, ours on GPU and
 * CPU against TF.js's WebGPU and CPU steps, into docs/benchmarks.md.
 * Options: --cycles N (the whole sequence N times, 3 by default), --rounds N
 * (timed rounds per scheme and backend), --steps N (timed TF.js steps),
 * --warmup N, --gpu native.
 */
import type { RoundTiming, TrainingBenchResult } from '../../client/bench/training';
import { runBrowserBench } from './browser';
import { fmt, loadText, writeSection } from './report';

function option(args: readonly string[], name: string): string | undefined {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
}

const split = (t: RoundTiming) => `${fmt(t.computeMs)} / ${fmt(t.compressMs)} / ${fmt(t.encodeMs)}`;
const timesFaster = (slow: number, fast: number) => `${fmt(slow / fast)}×`;

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

  const core = result.spectralCore;
  const coreText =
    core === undefined
      ? 'no device-route core SVD measured'
      : `the device route's core SVD here: device ${fmt(core.deviceMs)} ms, ` +
        `host ${fmt(core.hostMs)} ms → ${core.core}`;
  const tfWebgpu = result.tfjs.find((t) => t.backend === 'webgpu');
  const tfCpu = result.tfjs.find((t) => t.backend === 'cpu');
  const tfText = result.tfjs.map((t) => `${t.backend} ${fmt(t.stepMs)} ms`).join(', ');
  const rounds = Math.min(...result.schemes.flatMap((row) => [row.gpu.rounds, row.cpu.rounds]));
  writeSection('training', {
    title: `Training round (MLP 784-128-10, batch ${result.batchSize})`,
    command,
    on: `**${result.adapter}** in headless Chromium (${result.userAgent.match(/Chrome\/[\d.]+/)?.[0] ?? 'Chromium'})`,
    loadBefore,
    how: [
      `One worker round (core/training/workerRound.ts: minibatch, ` +
        `forward + backward, compression, encoding) on real MNIST, ` +
        `ours on the GPU and on the CPU, ${result.cycles.length} cycles ` +
        `of every scheme in turn, ${result.warmup} warm-up ` +
        `rounds each, medians of ≥ ${rounds} rounds; ${fmt(minutes)} min in all.`,
      `TF.js 4.22's step (forward + backward + SGD, minibatch ` +
        `already on the device, loss read back) of the same MLP: ` +
        `${tfText}; speed-up is its step over our GPU round (> 1×: ours is faster).`,
      `Rows without a route are a tab's defaults; "compressed on CPU": the gradient read back first; ${coreText}.`,
    ],
    header: [
      'scheme',
      'GPU round ms',
      'GPU compute / compress / encode ms',
      'CPU round ms',
      'CPU compute / compress / encode ms',
      'bytes per round',
      'vs TF.js WebGPU',
      'vs TF.js CPU',
    ],
    rows: result.schemes.map((row) => [
      row.scheme,
      fmt(row.gpu.totalMs),
      `${split(row.gpu)}${row.gpu.compressedOn === 'cpu' ? ' (compressed on CPU)' : ''}`,
      fmt(row.cpu.totalMs),
      split(row.cpu),
      String(row.gpu.bytes),
      tfWebgpu === undefined ? '—' : timesFaster(tfWebgpu.stepMs, row.gpu.totalMs),
      tfCpu === undefined ? '—' : timesFaster(tfCpu.stepMs, row.gpu.totalMs),
    ]),
  });
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
