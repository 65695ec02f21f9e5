/**
 * The CPU TrainingBackend: float32 storage, double-precision arithmetic in
 * registers (JavaScript numbers), one workspace per batch size seen.
 */
import type { GradientFactors, LossAndGradient, TrainingBackend } from '../backend';
import { spectralRoute } from '../../atomo/decompositions/spectral';
import type { Conv2dLayer, ModelLayout } from '../layout';
import { convFactors } from './conv2d';
import { cpuBackward, cpuForward } from './network';
import { softmaxCrossEntropy } from './softmax-cross-entropy';
import { CpuWorkspace } from './workspace';

/** Workspaces kept at once: training uses one batch size, evaluation one or two (full chunks and the remainder). */
const MAX_CACHED_WORKSPACES = 4;

/**
 * The CPU backend's two computations, synchronous: what createCpuBackend wraps in promises. Results are reused buffers.
 */
export interface CpuComputations {
  lossAndGradient(params: Float32Array, images: Float32Array, labels: Uint8Array, batch: number): LossAndGradient;
  predict(params: Float32Array, images: Float32Array, batch: number): Float32Array;
}

/**
 * Which weight gradients come with their factors: those the spectral route chooser would factor (the default), or all
 * (for benchmarks).
 */
export type FactorsWanted = 'factored-route' | 'all';

/** The synchronous computations of the CPU backend for `layout`, with their workspaces. */
export function createCpuComputations(layout: ModelLayout, wanted: FactorsWanted = 'factored-route'): CpuComputations {
  const workspaces = new Map<number, CpuWorkspace>();
  const gradient = new Float32Array(layout.parameterCount);
  const convBuffers = new Map<Conv2dLayer, ConvFactorBuffers>();

  const workspaceFor = (batch: number): CpuWorkspace => {
    let workspace = workspaces.get(batch);
    if (workspace === undefined) {
      if (workspaces.size >= MAX_CACHED_WORKSPACES) workspaces.delete(workspaces.keys().next().value!);
      workspace = new CpuWorkspace(layout, batch);
      workspaces.set(batch, workspace);
    }
    return workspace;
  };

  return {
    lossAndGradient(params, images, labels, batch) {
      checkInputs(layout, params, images, batch);
      if (labels.length < batch) throw new RangeError(`${labels.length} labels for a batch of ${batch}`);
      const workspace = workspaceFor(batch);
      const logits = cpuForward(layout, params, images, workspace);
      const dLogits = workspace.outputGradients.at(-1)!;
      const loss = softmaxCrossEntropy(logits, labels, dLogits, batch, layout.classCount);
      gradient.fill(0);
      cpuBackward(layout, params, images, workspace, gradient);
      return { loss, gradient, factors: layerFactors(layout, images, workspace, convBuffers, wanted) };
    },
    predict(params, images, batch) {
      checkInputs(layout, params, images, batch);
      return cpuForward(layout, params, images, workspaceFor(batch));
    },
  };
}

/** A backend that trains `layout` on the CPU. Results are reused buffers (see TrainingBackend). */
export function createCpuBackend(layout: ModelLayout): TrainingBackend {
  const cpu = createCpuComputations(layout);
  return {
    kind: 'cpu',
    lossAndGradient: (params, images, labels, batch) =>
      settle(() => cpu.lossAndGradient(params, images, labels, batch)),
    predict: (params, images, batch) => settle(() => cpu.predict(params, images, batch)),
  };
}

/**
 * The factors of every weight gradient that the spectral route chooser
 * (core/atomo/decompositions/spectral.ts) would take the factored route
 * for, by tensor index: a dense layer's input X and output delta Δ (views of
 * the workspace, free), and a convolution's im2col factors when
 * batch·positions is small enough (written into buffers kept per layer).
 * Valid until the next call, like the gradient.
 */
function layerFactors(
  layout: ModelLayout,
  images: Float32Array,
  workspace: CpuWorkspace,
  convBuffers: Map<Conv2dLayer, ConvFactorBuffers>,
  wanted: FactorsWanted,
): Map<number, GradientFactors> {
  const { batch, outputs, outputGradients } = workspace;
  const factors = new Map<number, GradientFactors>();
  layout.layers.forEach((layer, i) => {
    const x = i === 0 ? images : outputs[i - 1]!;
    if (layer.type === 'dense') {
      const input = x.subarray(0, batch * layer.inputSize);
      factors.set(layout.tensors.indexOf(layer.weight), { input, delta: outputGradients[i]!, batch });
      return;
    }
    if (layer.type !== 'conv2d') return;
    const inner = batch * layer.output.height * layer.output.width;
    if (wanted !== 'all' && spectralRoute(layer.weight.shape, inner) !== 'factored') return;
    const [out, taps] = layer.weight.shape;
    let buffers = convBuffers.get(layer);
    if (buffers?.left.length !== inner * out) {
      buffers = { left: new Float32Array(inner * out), right: new Float32Array(inner * taps) };
      convBuffers.set(layer, buffers);
    }
    convFactors(layer, x, outputGradients[i]!, batch, workspace.col, buffers.left, buffers.right);
    factors.set(layout.tensors.indexOf(layer.weight), { input: buffers.left, delta: buffers.right, batch: inner });
  });
  return factors;
}

/** A convolution's im2col factors, reused across calls with the same batch size. */
interface ConvFactorBuffers {
  readonly left: Float32Array;
  readonly right: Float32Array;
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
  if (params.length !== layout.parameterCount)
    throw new RangeError(`${layout.kind}: ${params.length} parameters, expected ${layout.parameterCount}`);
  if (!Number.isInteger(batch) || batch < 1) throw new RangeError(`batch must be a positive integer, got ${batch}`);
  if (images.length < batch * layout.inputSize)
    throw new RangeError(`${images.length} pixels do not hold ${batch} images of ${layout.inputSize}`);
}
