/**
 * Real gradients to time compression on: the per-layer gradient (with a
 * dense layer's factors) of each minibatch at its weights, computed on the
 * CPU backend as a worker computes them. `npm run bench -- compress` and
 * the comparison's calibration (scripts/compare/calibration.ts) take their
 * inputs from here.
 */
import type { Batch } from '../../core/data';
import type { GradientFactors } from '../../core/linalg/factoredSvd';
import type { TrainingBackend } from '../../core/model/backend';
import type { ModelLayout } from '../../core/model/layout';
import { layerGradients, type LayerGradient } from '../../core/training/compression';

/** Copies of a gradient's factors: the backend reuses its buffers on the next call. */
export function copyFactors(factors: ReadonlyMap<number, GradientFactors> | undefined): Map<number, GradientFactors> {
  return new Map(
    [...(factors ?? new Map<number, GradientFactors>())].map(([k, f]) => [
      k,
      { input: f.input.slice(), delta: f.delta.slice(), batch: f.batch },
    ]),
  );
}

/** Each minibatch's per-layer gradient at its weights (`weights[i]` for `batches[i]`), copied out of the backend. */
export async function gradientsOn(
  backend: TrainingBackend,
  layout: ModelLayout,
  weights: readonly Float32Array[],
  batches: readonly Batch[],
  batchSize: number,
): Promise<LayerGradient[][]> {
  const gradients: LayerGradient[][] = [];
  for (const [round, batch] of batches.entries()) {
    const result = await backend.lossAndGradient(weights[round]!, batch.pixels, batch.labels, batchSize);
    gradients.push(layerGradients(layout, { gradient: result.gradient.slice(), factors: copyFactors(result.factors) }));
  }
  return gradients;
}
