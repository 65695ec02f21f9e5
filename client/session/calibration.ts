/**
 * Which backend trains faster on this device (docs/design.md, "Each tab on
 * its fastest backend"). A software WebGPU adapter, or a phone's small GPU,
 * can be slower than plain TypeScript on the same device; only timing says.
 * The same rounds run on both trainers: one warm-up round each first (the
 * first GPU round compiles every pipeline; the CPU's warms its caches),
 * then timed rounds alternating GPU and CPU on the same minibatches, so a
 * busy moment of the device hurts both alike. The median of each decides.
 * The rounds are for timing only: nothing here is sent.
 */
import type { BackendTimes } from '../../core/protocol';
import { median } from '../bench/timing';
import type { Trainer } from './trainer';

/** The times and the backend they chose. */
export interface Calibration extends BackendTimes {
  readonly choice: 'webgpu' | 'cpu';
}

/** Timed rounds per backend (after the warm-up): few, since the tab waits; an odd count has a true median. */
export const CALIBRATION_ROUNDS = 3;

/** Options of `calibrateBackends`. */
export interface CalibrationOptions {
  /** A millisecond clock (performance.now in a tab). */
  readonly now: () => number;
  readonly rounds?: number;
  /** After every round: rounds done out of the total (warm-ups included), for the progress bar. */
  readonly onProgress?: (done: number, total: number) => void;
}

/** The steps of a calibration with `rounds` timed rounds per backend: a warm-up each, then the timed ones. */
export function calibrationSteps(rounds = CALIBRATION_ROUNDS): number {
  return 2 * (rounds + 1);
}

/** Times `gpu` and `cpu` on the rounds of model `weights` and picks the faster (ties go to WebGPU). */
export async function calibrateBackends(
  gpu: Trainer,
  cpu: Trainer,
  weights: Float32Array,
  options: CalibrationOptions,
): Promise<Calibration> {
  const rounds = options.rounds ?? CALIBRATION_ROUNDS;
  const total = calibrationSteps(rounds);
  let done = 0;
  const step = async (trainer: Trainer, version: number): Promise<number> => {
    const started = options.now();
    await trainer.round(weights, version);
    const elapsed = options.now() - started;
    options.onProgress?.(++done, total);
    return elapsed;
  };
  options.onProgress?.(0, total);
  // Version 0 warms up; versions 1..rounds are the same minibatches on both.
  await step(gpu, 0);
  await step(cpu, 0);
  const gpuMs: number[] = [];
  const cpuMs: number[] = [];
  for (let version = 1; version <= rounds; version++) {
    gpuMs.push(await step(gpu, version));
    cpuMs.push(await step(cpu, version));
  }
  const webgpuMs = median(gpuMs);
  const cpuMedian = median(cpuMs);
  return { webgpuMs, cpuMs: cpuMedian, choice: cpuMedian < webgpuMs ? 'cpu' : 'webgpu' };
}
