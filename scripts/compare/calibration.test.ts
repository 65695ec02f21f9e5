/** The comparison's calibration: what it measures, where it keeps it, and what the time model takes from it. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadMnist } from '../../core/data';
import { DEFAULT_RUN_CONFIG, applyRunConfigPatch } from '../../core/schema';
import { createFileReader } from '../../server/data/fileReader';
import { readThreadCpuMs } from '../../server/run/threadClock';
import type { SwarmHistory } from '../swarm/history';
import { calibrate, calibrationOf, readCalibrations } from './calibration';
import { settingTimes } from './stats';

const dir = mkdtempSync(join(tmpdir(), 'calibration-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** One block of one pass: the figures' size is the benchmark's business, not this test's. */
// Blocks of 20 ms: the thread's CPU clock (schedstat) advances at scheduler ticks, so a 1 ms block can read 0.
const QUICK_TIMING = { warmupPasses: 1, blocks: 1, blockMs: 20 };

describe('the calibration', () => {
  it.runIf(readThreadCpuMs() !== null)(
    'times the model once and each setting, keeps them per model, dataset and setting, and merges later ones',
    async () => {
      const { train } = await loadMnist(createFileReader());
      const target = { model: 'mlp', dataset: 'mnist', batchSize: 32, seed: 1 } as const;
      const config = (patch: object) => applyRunConfigPatch(DEFAULT_RUN_CONFIG, patch);
      await calibrate(
        dir,
        target,
        [
          { id: 'svd-2', compression: config({ scheme: 'atomo-svd', budget: 2 }) },
          { id: 'terngrad-clip', compression: config({ scheme: 'terngrad', terngradClip: 2.5 }) },
        ],
        QUICK_TIMING,
        train,
      );
      await calibrate(dir, target, [{ id: 'none', compression: config({ scheme: 'none' }) }], QUICK_TIMING, train);
      const file = readCalibrations(dir);
      expect(Object.keys(file.compute)).toEqual(['mlp/mnist']);
      expect(Object.keys(file.settings).sort()).toEqual([
        'mlp/mnist/none',
        'mlp/mnist/svd-2',
        'mlp/mnist/terngrad-clip',
      ]);
      for (const id of ['none', 'svd-2', 'terngrad-clip']) {
        const times = calibrationOf(file, 'mlp', 'mnist', id)!;
        expect(times.computeMs).toBe(file.compute['mlp/mnist']!.computeMs);
        // Every step does work: a forward/backward pass, a compression, an encoding of ~100k weights.
        for (const ms of [times.computeMs, times.compressMs, times.encodeMs]) {
          expect(Number.isFinite(ms)).toBe(true);
          expect(ms).toBeGreaterThan(0);
        }
      }
      // Another model, dataset or setting has none.
      expect(calibrationOf(file, 'cnn', 'mnist', 'svd-2')).toBeUndefined();
      expect(calibrationOf(file, 'mlp', 'fashion', 'svd-2')).toBeUndefined();
      expect(calibrationOf(file, 'mlp', 'mnist', 'qsgd-4')).toBeUndefined();
    },
    60_000,
  );

  it('is what a setting’s times come from when present; else the workers’ own means, on their clock', () => {
    const history = (clock: 'thread-cpu' | 'wall') =>
      ({
        rounds: [
          {
            workerComputeMs: [10, 6],
            workerTimes: [
              { compressMs: 4, encodeMs: 1, applyMs: 1, clock },
              { compressMs: 2, encodeMs: 1, clock: 'thread-cpu' },
            ],
          },
        ],
      }) as unknown as SwarmHistory;
    expect(settingTimes([history('thread-cpu')])).toEqual({
      source: 'thread-cpu',
      computeMs: 3.5,
      compressMs: 3,
      encodeMs: 1,
      applyMs: 0.5,
    });
    expect(settingTimes([history('wall')]).source).toBe('wall');
    const calibration = { computeMs: 2, compressMs: 1, encodeMs: 0.25 };
    expect(settingTimes([history('thread-cpu')], calibration)).toEqual({
      source: 'calibration',
      ...calibration,
      applyMs: 0.5,
    });
  });
});
