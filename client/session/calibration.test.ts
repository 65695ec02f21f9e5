import { describe, expect, it } from 'vitest';
import { createModelLayout } from '../../core/model';
import { WALL_CLOCK } from '../../core/training/workerRound';
import { calibrateBackends, calibrationSteps, CALIBRATION_ROUNDS } from './calibration';
import type { Trainer, TrainerRound } from './trainer';

/**
 * A trainer whose round `version` takes `cost(version)` ms on the shared fake clock, and which records the versions
 * asked.
 */
function fakeTrainer(
  kind: Trainer['kind'],
  clock: { t: number },
  cost: (version: number) => number,
): Trainer & { versions: number[] } {
  const versions: number[] = [];
  const trainer = {
    kind,
    layout: createModelLayout('mlp'),
    clock: WALL_CLOCK,
    versions,
    async round(_weights: Float32Array, version: number): Promise<TrainerRound> {
      versions.push(version);
      clock.t += cost(version);
      return { layers: [], loss: 0, layerStats: [], bytes: 0, computeMs: 0, compressMs: 0, encodeMs: 0, clock: 'wall' };
    },
    predict: async () => new Uint8Array(),
    restart: () => trainer,
    dispose: () => {},
  };
  return trainer;
}

describe('calibrateBackends', () => {
  it('times the same rounds on both after a warm-up each, and picks the lower median', async () => {
    const clock = { t: 0 };
    // The GPU's first round compiles its pipelines (5 s); then 40 ms a round with one slow outlier. The CPU: 9 ms.
    const gpu = fakeTrainer('webgpu', clock, (v) => (v === 0 ? 5_000 : v === 2 ? 400 : 40));
    const cpu = fakeTrainer('cpu', clock, (v) => (v === 0 ? 30 : 9));
    const progress: [number, number][] = [];
    const result = await calibrateBackends(gpu, cpu, new Float32Array(0), {
      now: () => clock.t,
      onProgress: (done, total) => progress.push([done, total]),
    });
    expect(result).toEqual({ webgpuMs: 40, cpuMs: 9, choice: 'cpu' });
    expect(gpu.versions).toEqual([0, 1, 2, 3]);
    expect(cpu.versions).toEqual(gpu.versions);
    const total = calibrationSteps();
    expect(total).toBe(2 * (CALIBRATION_ROUNDS + 1));
    expect(progress).toEqual(Array.from({ length: total + 1 }, (_, done) => [done, total]));
  });

  it('keeps WebGPU when it is faster, and on a tie', async () => {
    const clock = { t: 0 };
    const faster = await calibrateBackends(
      fakeTrainer('webgpu', clock, () => 12),
      fakeTrainer('cpu', clock, () => 30),
      new Float32Array(0),
      { now: () => clock.t, rounds: 1 },
    );
    expect(faster).toEqual({ webgpuMs: 12, cpuMs: 30, choice: 'webgpu' });
    const tie = await calibrateBackends(
      fakeTrainer('webgpu', clock, () => 20),
      fakeTrainer('cpu', clock, () => 20),
      new Float32Array(0),
      {
        now: () => clock.t,
      },
    );
    expect(tie.choice).toBe('webgpu');
  });

  it('passes a failing round on to the caller (which falls back to the CPU)', async () => {
    const clock = { t: 0 };
    const broken = fakeTrainer('webgpu', clock, () => 1);
    broken.round = async () => {
      throw new Error('device lost');
    };
    await expect(
      calibrateBackends(
        broken,
        fakeTrainer('cpu', clock, () => 1),
        new Float32Array(0),
        { now: () => clock.t },
      ),
    ).rejects.toThrow('device lost');
  });
});
