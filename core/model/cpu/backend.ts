/**
 * The CPU TrainingBackend: float32 storage, double-precision arithmetic in
 * registers (JavaScript numbers), one workspace per batch size seen.
 */
import type { GradientFactors, LossAndGradient, TrainingBackend } from '../backend';
import type { ModelLayout } from '../layout';
import { cpuBackward, cpuForward } from './network';
import { softmaxCrossEntropy } from './softmax-cross-entropy';
import { CpuWorkspace } from './workspace';

/** Workspaces kept at once: training uses one batch size, evaluation one or two (full chunks and the remainder). */
const MAX_CACHED_WORKSPACES = 4;

/** A backend that trains `layout` on the CPU. Results are reused buffers (see TrainingBackend). */
export function createCpuBackend(layout: ModelLayout): TrainingBackend {
  const workspaces = new Map<number, CpuWorkspace>();
  const gradient = new Float32Array(layout.parameterCount);

  const workspaceFor = (batch: number): CpuWorkspace => {
    let workspace = workspaces.get(batch);
    if (workspace === undefined) {
      if (workspaces.size >= MAX_CACHED_WORKSPACES) workspaces.delete(workspaces.keys().next().value!);
      workspace = new CpuWorkspace(layout, batch);
      workspaces.set(batch, workspace);
    }
    return workspace;
  };

  const lossAndGradientNow = (params: Float32Array, images: Float32Array, labels: Uint8Array, batch: number): LossAndGradient => {
    checkInputs(layout, params, images, batch);
    if (labels.length < batch) throw new RangeError(`${labels.length} labels for a batch of ${batch}`);
    const workspace = workspaceFor(batch);
    const logits = cpuForward(layout, params, images, workspace);
    const dLogits = workspace.outputGradients.at(-1)!;
    const loss = softmaxCrossEntropy(logits, labels, dLogits, batch, layout.classCount);
    gradient.fill(0);
    cpuBackward(layout, params, images, workspace, gradient);
    return { loss, gradient, factors: denseFactors(layout, images, workspace) };
  };

  const predictNow = (params: Float32Array, images: Float32Array, batch: number): Float32Array => {
    checkInputs(layout, params, images, batch);
    return cpuForward(layout, params, images, workspaceFor(batch));
  };

  return {
    kind: 'cpu',
    lossAndGradient: (params, images, labels, batch) => settle(() => lossAndGradientNow(params, images, labels, batch)),
    predict: (params, images, batch) => settle(() => predictNow(params, images, batch)),
  };
}

/**
 * The factors X (the layer's input) and Δ (dLoss/d its output) of every
 * dense weight gradient, by tensor index: views of the workspace, valid
 * until the next call, like the gradient.
 */
function denseFactors(layout: ModelLayout, images: Float32Array, workspace: CpuWorkspace): Map<number, GradientFactors> {
  const { batch, outputs, outputGradients } = workspace;
  const factors = new Map<number, GradientFactors>();
  layout.layers.forEach((layer, i) => {
    if (layer.type !== 'dense') return;
    const input = (i === 0 ? images : outputs[i - 1]!).subarray(0, batch * layer.inputSize);
    factors.set(layout.tensors.indexOf(layer.weight), { input, delta: outputGradients[i]!, batch });
  });
  return factors;
}

/** Runs synchronously, but reports a throw as a rejected promise like any async backend would. */
function settle<T>(compute: () => T): Promise<T> {
  try {
    return Promise.resolve(compute());
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

function checkInputs(layout: ModelLayout, params: Float32Array, images: Float32Array, batch: number): void {
  if (params.length !== layout.parameterCount) throw new RangeError(`${layout.kind}: ${params.length} parameters, expected ${layout.parameterCount}`);
  if (!Number.isInteger(batch) || batch < 1) throw new RangeError(`batch must be a positive integer, got ${batch}`);
  if (images.length < batch * layout.inputSize) throw new RangeError(`${images.length} pixels do not hold ${batch} images of ${layout.inputSize}`);
}
