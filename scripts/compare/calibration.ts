/**
 * The comparison's calibration: what a worker's step costs on an idle core,
 * measured on the compare's main thread before any worker thread runs
 * (docs/design.md, "Where the comparison's times come from"). The workers'
 * own thread CPU times (docs/protocol.md, "Worker times") are measured while
 * N worker threads share the machine's cores, whose contention (SMT
 * siblings, caches) and the JIT's first rounds inflate even a thread's CPU
 * time; the calibration times the same steps alone.
 *
 * Per model (and dataset): the gradient's compute, a worker's minibatch
 * and forward/backward on the CPU backend. Per setting: its compression
 * (with the worker's error-feedback memory and its indicator every
 * INDICATOR_EVERY rounds) and its encoding, on real gradients of the model
 * at its initial weights (the run's seed), CALIBRATION_STEPS minibatches.
 * Each step is timed as `npm run bench -- compress` times its steps
 * (scripts/bench/threadTiming.ts): untimed passes first, then blocks of the
 * steps in a row on the main thread's CPU clock, their median kept.
 * calibration.json beside the histories keeps the figures, keyed by model,
 * dataset and setting, so a report redrawn later uses the same ones.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Compression } from '../../core/atomo/types';
import { encodeForWire } from '../../core/codec';
import { createBatch, loadMnist, MinibatchSampler, type Dataset } from '../../core/data';
import type { DatasetName } from '../../core/data/datasets';
import { createCpuBackend } from '../../core/model/cpu/backend';
import { heInitialise } from '../../core/model/init';
import { createModelLayout, type ModelKind } from '../../core/model/layout';
import { compressOnCpu, type LayerStreams } from '../../core/training/compression';
import { INDICATOR_EVERY } from '../../core/training/workerRound';
import { createFileReader } from '../../server/data/fileReader';
import { gradientsOn } from '../bench/gradients';
import { threadCpuMedian, type BlockTiming } from '../bench/threadTiming';
import type { CalibratedTimes } from '../swarm/history';

/** Minibatches a calibration steps through: two indicator periods, so one step in INDICATOR_EVERY measures it. */
export const CALIBRATION_STEPS = 2 * INDICATOR_EVERY;

/** Three untimed passes over the steps, then five blocks of at least 100 ms of steps each; their median. */
export const CALIBRATION_TIMING: BlockTiming = { warmupPasses: 3, blocks: 5, blockMs: 100 };

/** The examples a calibration's minibatches come from: the first of the training split, as a worker's shard. */
const SHARD = 4096;

/** One setting's calibrated compression and encoding, main-thread CPU ms per step. */
export interface SchemeCalibration {
  readonly compressMs: number;
  readonly encodeMs: number;
  readonly measuredAt: string;
}

/** The gradient's compute for a model, main-thread CPU ms per step. */
export interface ComputeCalibration {
  readonly computeMs: number;
  readonly measuredAt: string;
}

/** calibration.json: compute per `model/dataset`, compression and encoding per `model/dataset/setting`. */
export interface CalibrationFile {
  readonly compute: Record<string, ComputeCalibration>;
  readonly settings: Record<string, SchemeCalibration>;
}

const modelKey = (model: ModelKind, dataset: DatasetName) => `${model}/${dataset}`;
const settingKey = (model: ModelKind, dataset: DatasetName, id: string) => `${modelKey(model, dataset)}/${id}`;

/** The calibration file in `outDir` (empty when there is none). */
export function readCalibrations(outDir: string): CalibrationFile {
  const path = join(outDir, 'calibration.json');
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as CalibrationFile) : { compute: {}, settings: {} };
}

/** A setting's calibrated times, when both its model's compute and its own steps were calibrated. */
export function calibrationOf(
  file: CalibrationFile,
  model: ModelKind,
  dataset: DatasetName,
  id: string,
): CalibratedTimes | undefined {
  const compute = file.compute[modelKey(model, dataset)];
  const setting = file.settings[settingKey(model, dataset, id)];
  if (compute === undefined || setting === undefined) return undefined;
  return { computeMs: compute.computeMs, compressMs: setting.compressMs, encodeMs: setting.encodeMs };
}

/** A setting to calibrate: its id and the compression its workers run (the run's configuration). */
export interface CalibrationSetting {
  readonly id: string;
  readonly compression: Compression;
}

/** What to calibrate on: the model, its dataset and batch size, and the seed of its initial weights. */
export interface CalibrationTarget {
  readonly model: ModelKind;
  readonly dataset: DatasetName;
  readonly batchSize: number;
  readonly seed: number;
}

/**
 * Calibrates the model's compute and every setting's compression and encoding (main-thread CPU ms per step), merges
 * them into `outDir`'s calibration.json and returns the file. Nothing is stored where the thread's CPU clock cannot
 * be read (not Linux): the comparison then uses the workers' own times.
 */
export async function calibrate(
  outDir: string,
  target: CalibrationTarget,
  settings: readonly CalibrationSetting[],
  timing: BlockTiming = CALIBRATION_TIMING,
  train?: Dataset,
): Promise<CalibrationFile> {
  const { model, dataset, batchSize, seed } = target;
  const data = train ?? (await loadMnist(createFileReader(), dataset)).train;
  const layout = createModelLayout(model);
  const backend = createCpuBackend(layout);
  const weights = heInitialise(layout, seed);
  const shard = Uint32Array.from({ length: Math.min(SHARD, data.count) }, (_, i) => i);
  const sampler = new MinibatchSampler(shard, batchSize, seed, 0);
  const indices = new Uint32Array(batchSize);
  const batch = createBatch(batchSize);
  // The worker's compute: its minibatch, then forward and backward (core/training/workerRound.ts).
  const computeMs = await threadCpuMedian(
    CALIBRATION_STEPS,
    async (round) => {
      data.batch(sampler.batch(round, indices), batch);
      await backend.lossAndGradient(weights, batch.pixels, batch.labels, batchSize);
    },
    timing,
  );
  const batches = Array.from({ length: CALIBRATION_STEPS }, (_, round) => data.batch(sampler.batch(round)));
  const gradients = await gradientsOn(
    backend,
    layout,
    batches.map(() => weights),
    batches,
    batchSize,
  );
  const measuredAt = new Date().toISOString();
  const file = readCalibrations(outDir);
  const next: CalibrationFile = { compute: { ...file.compute }, settings: { ...file.settings } };
  if (!Number.isFinite(computeMs)) return file;
  next.compute[modelKey(model, dataset)] = { computeMs, measuredAt };
  for (const { id, compression } of settings) {
    const memories = layout.tensors.map(() => ({}));
    const stream =
      (round: number): LayerStreams =>
      (layer) => ({ seed, worker: 0, round, layer });
    const compress = (round: number) =>
      compressOnCpu(gradients[round]!, compression, stream(round), {
        memories,
        measureIndicator: round % INDICATOR_EVERY === 0,
      });
    const compressMs = await threadCpuMedian(CALIBRATION_STEPS, compress, timing);
    const samples = gradients.map((_, round) => compress(round).map(({ sample }) => sample));
    const encodeMs = await threadCpuMedian(
      CALIBRATION_STEPS,
      (round) => samples[round]!.map((sample, layer) => encodeForWire(sample, layer)),
      timing,
    );
    next.settings[settingKey(model, dataset, id)] = { compressMs, encodeMs, measuredAt };
  }
  writeFileSync(join(outDir, 'calibration.json'), JSON.stringify(next, null, 1));
  return next;
}
