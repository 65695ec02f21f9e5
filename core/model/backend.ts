/**
 * The contract between a worker's training loop and whatever computes the
 * model: the CPU backend here, or the WebGPU one in client/gpu. Both compute
 * exactly what core/model/reference specifies, within a stated tolerance.
 */

/** Which implementation a backend is, shown on screen ("training on CPU"). */
export type BackendKind = 'cpu' | 'webgpu';

/** Loss and gradient of one minibatch. */
export interface LossAndGradient {
  /** Mean softmax cross-entropy over the batch. */
  readonly loss: number;
  /** dLoss/dParams, laid out like the parameters (ModelLayout.tensors). */
  readonly gradient: Float32Array;
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
  lossAndGradient(params: Float32Array, images: Float32Array /* batch·784 in [0,1] */, labels: Uint8Array, batch: number): Promise<LossAndGradient>;
  /** Logits for evaluation: batch·classCount, example-major. */
  predict(params: Float32Array, images: Float32Array, batch: number): Promise<Float32Array>;
}
