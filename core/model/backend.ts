/**
 * The contract between a worker's training loop and whatever computes the
 * model: the CPU backend here, or the WebGPU one in client/gpu. Both compute
 * exactly what core/model/reference specifies, within a stated tolerance.
 */
import type { GradientFactors } from '../linalg/factoredSvd';

/** The factors of a dense layer's weight gradient (core/linalg/factoredSvd.ts). */
export type { GradientFactors };

/** Which implementation a backend is, shown on screen ("training on CPU"). */
export type BackendKind = 'cpu' | 'webgpu';

/** Loss and gradient of one minibatch. */
export interface LossAndGradient {
  /** Mean softmax cross-entropy over the batch. */
  readonly loss: number;
  /** dLoss/dParams, laid out like the parameters (ModelLayout.tensors). */
  readonly gradient: Float32Array;
  /** Factors of the dense weight gradients, by tensor index, from a backend that keeps them. */
  readonly factors?: ReadonlyMap<number, GradientFactors>;
}

/**
 * Computes the model of one ModelLayout.
 *
 * Buffers returned may belong to the backend and be overwritten by the next
 * call of the same method (the CPU backend reuses them, so a training step
 * allocates nothing). Copy a result to keep it past the next call, and do not
 * start a call while another is still pending.
 */
export interface TrainingBackend {
  readonly kind: BackendKind;
  /** Loss and gradient of the mean cross-entropy over the batch, for the given parameters. */
  lossAndGradient(
    params: Float32Array,
    images: Float32Array /* batch·784 in [0,1] */,
    labels: Uint8Array,
    batch: number,
  ): Promise<LossAndGradient>;
  /** Logits for evaluation: batch·classCount, example-major. */
  predict(params: Float32Array, images: Float32Array, batch: number): Promise<Float32Array>;
}

/**
 * A backend that can leave the gradient on its device, for a device
 * compressor (core/training/compression.ts) to compress there: the WebGPU
 * backend, whose handle G names GPU buffers.
 */
export interface DeviceTrainingBackend<G> extends TrainingBackend {
  /**
   * Submits forward + backward without reading anything back; the handle is valid until the next call of any method.
   */
  computeGradient(params: Float32Array, images: Float32Array, labels: Uint8Array, batch: number): G;
  /** Resolves when the device has finished the work submitted so far. */
  settled(): Promise<void>;
}
