/**
 * What every GPU compressor of this folder takes and gives: a minibatch
 * gradient that stays on the device (one flat buffer laid out like the
 * parameters, client/gpu/training/gpuBackend.ts), the tensors to compress
 * in it and the Philox stream of each layer; back come the mean loss (the
 * per-example losses sit after the gradient, so they are read with the
 * compressed layers) and, per layer, the sample and its statistics.
 */
import type { StreamId } from '../../../core/rng';
import type { CompressedLayerStats } from '../../../core/training/compression';
import { PlanCache } from '../runtime/dispatch';
import type { StagingPool, PendingRead } from '../runtime/pools';
import { meanLoss, type GpuGradient } from '../training/gpuBackend';

/** A tensor to compress: where its gradient sits in the flat buffer, and its matrix view. */
export interface GradientTensor {
  readonly offset: number;
  readonly shape: readonly [number, number];
}

/** The tensors' offsets and shapes as part of a plan key: a plan made for one list serves any equal list. */
export function tensorsKey(tensors: readonly GradientTensor[]): string {
  return tensors.map((t) => `${t.offset}:${t.shape.join('x')}`).join(',');
}

/**
 * A compressor's plans, one per gradient buffer and tensor list, the least
 * recently used of more than eight destroyed (a device trains one model at a
 * time; the spare room covers a change of batch or a calibration). Freeing
 * a dropped plan is safe because a compressor submits all it records from a
 * plan before it first awaits.
 */
export function gradientPlanCache<P extends { destroy(): void }>(): PlanCache<P> {
  return new PlanCache<P>(8, { destroyDropped: true });
}

/** The input of a GPU compressor. */
export interface DeviceGradient {
  readonly tensors: readonly GradientTensor[];
  readonly gradient: GpuGradient;
  /** The stream layer l draws from. */
  readonly stream: (layer: number) => StreamId;
}

/** The output of a GPU compressor: the mean minibatch loss and each tensor's sample with its statistics. */
export interface CompressedGradient {
  readonly loss: number;
  readonly layers: CompressedLayerStats[];
}

/** Records the read of the minibatch's per-example losses into `encoder`. */
export function encodeLossRead(staging: StagingPool, encoder: GPUCommandEncoder, gradient: GpuGradient): PendingRead {
  return staging.encodeRead(encoder, gradient.buffer, gradient.lossOffset * 4, gradient.batch * 4);
}

/** The mean loss from the bytes of encodeLossRead. */
export function meanLossOf(bytes: ArrayBuffer, gradient: GpuGradient): number {
  return meanLoss(new Float32Array(bytes), 0, gradient.batch);
}
