/**
 * What the models are: their layers, and where each parameter tensor lives in
 * the one flat Float32Array that travels between workers and the aggregator.
 *
 * Conventions every backend (CPU reference, CPU float32, WebGPU) shares:
 *  - activations are example-major; a feature map is channel-major (CHW), so
 *    flattening before a dense layer is a no-op on memory;
 *  - a dense weight is stored row-major as in × out, so y = x·W + b. Its
 *    gradient xᵀ·δ is then in × out too, rank ≤ batch (docs/design.md, "Decompositions", writes the
 *    transpose, δᵀ·x; the singular values are the same);
 *  - a conv kernel is stored as out × (in·kh·kw), row index o, column index
 *    (c·kh + ky)·kw + kx: exactly the matrix that multiplies im2col's columns,
 *    and the matrix ATOMO compresses;
 *  - a bias is a 1 × n matrix;
 *  - convolutions are 'valid' (no padding), stride 1; pooling is 2×2, stride 2.
 */
import type { Shape } from '../atomo/types';

/**
 * The architectures a run can train: the small MLP and CNN, and a wide MLP of over a million parameters whose
 * float32 gradient (4.3 MB a round) makes communication matter (docs/design.md, "The wide MLP").
 */
export type ModelKind = 'mlp' | 'cnn' | 'mlp-wide';

/** All model kinds, for validating configuration. */
export const MODEL_KINDS: readonly ModelKind[] = ['mlp', 'cnn', 'mlp-wide'];

/** Pixels per MNIST image, the models' input width. */
export const INPUT_SIZE = 784;
/** Number of classes, the models' output width (logits). */
export const CLASS_COUNT = 10;

/** Shape of one example's feature map, stored channel-major (CHW). */
export interface FeatureShape {
  readonly channels: number;
  readonly height: number;
  readonly width: number;
}

/** One named parameter tensor: its place in the flat vector and its matrix view for compression. */
export interface ParameterTensor {
  /** e.g. 'dense1.weight', 'conv2.bias'. */
  readonly name: string;
  readonly role: 'weight' | 'bias';
  /** The matrix ATOMO sees; rows·cols = size. */
  readonly shape: Shape;
  /** Index of the first element in the flat parameter vector. */
  readonly offset: number;
  /** Number of elements. */
  readonly size: number;
  /** Inputs feeding each output unit (He initialisation: variance 2/fanIn). */
  readonly fanIn: number;
}

/** y = x·W + b per example; W is inputSize × outputSize. */
export interface DenseLayer {
  readonly type: 'dense';
  readonly name: string;
  readonly inputSize: number;
  readonly outputSize: number;
  readonly weight: ParameterTensor;
  readonly bias: ParameterTensor;
}

/** 'Valid' stride-1 convolution (cross-correlation) with a square kernel, plus a bias per output channel. */
export interface Conv2dLayer {
  readonly type: 'conv2d';
  readonly name: string;
  readonly input: FeatureShape;
  readonly output: FeatureShape;
  readonly kernelSize: number;
  readonly inputSize: number;
  readonly outputSize: number;
  readonly weight: ParameterTensor;
  readonly bias: ParameterTensor;
}

/** y = max(x, 0) elementwise. */
export interface ReluLayer {
  readonly type: 'relu';
  readonly inputSize: number;
  readonly outputSize: number;
}

/** 2×2 max-pooling, stride 2, per channel. */
export interface MaxPool2dLayer {
  readonly type: 'maxpool2d';
  readonly input: FeatureShape;
  readonly output: FeatureShape;
  readonly inputSize: number;
  readonly outputSize: number;
}

/** One layer of a sequential model; inputSize and outputSize are per example. */
export type Layer = DenseLayer | Conv2dLayer | ReluLayer | MaxPool2dLayer;

/** A sequential model ending in logits, trained with mean softmax cross-entropy. */
export interface ModelLayout {
  readonly kind: ModelKind;
  /** Per-example input, e.g. 1 × 28 × 28. */
  readonly input: FeatureShape;
  readonly inputSize: number;
  readonly classCount: number;
  readonly layers: readonly Layer[];
  /** Every parameter tensor, in the order they sit in the flat vector. */
  readonly tensors: readonly ParameterTensor[];
  /** Length of the flat parameter vector. */
  readonly parameterCount: number;
}

/** Sizes of an MLP input → hidden (ReLU) → classes. */
export interface MlpOptions {
  readonly inputSize: number;
  readonly hiddenSize: number;
  readonly classCount: number;
}

/** Sizes of an MLP input → hidden₁ (ReLU) → hidden₂ (ReLU) → … → classes. */
export interface DeepMlpOptions {
  readonly inputSize: number;
  readonly hiddenSizes: readonly number[];
  readonly classCount: number;
}

/** Sizes of a LeNet-style CNN: two (conv → ReLU → 2×2 max-pool) blocks, then dense → classes. */
export interface CnnOptions {
  readonly input: FeatureShape;
  readonly kernelSize: number;
  readonly conv1Channels: number;
  readonly conv2Channels: number;
  readonly classCount: number;
}

/** The default MLP: 784-128-10. */
export const DEFAULT_MLP: MlpOptions = { inputSize: INPUT_SIZE, hiddenSize: 128, classCount: CLASS_COUNT };

/** The wide MLP: 784-1024-256-10, 1,068,810 parameters (4.28 MB as float32). */
export const WIDE_MLP: DeepMlpOptions = { inputSize: INPUT_SIZE, hiddenSizes: [1024, 256], classCount: CLASS_COUNT };

/** The default CNN: 1×28×28 → conv5 (8) 24×24 → pool 12×12 → conv5 (16) 8×8 → pool 4×4 → dense 256→10. */
export const DEFAULT_CNN: CnnOptions = {
  input: { channels: 1, height: 28, width: 28 },
  kernelSize: 5,
  conv1Channels: 8,
  conv2Channels: 16,
  classCount: CLASS_COUNT,
};

/** The layout of a model kind at its default (MNIST) size. */
export function createModelLayout(kind: ModelKind): ModelLayout {
  switch (kind) {
    case 'mlp':
      return mlpLayout(DEFAULT_MLP);
    case 'cnn':
      return cnnLayout(DEFAULT_CNN);
    case 'mlp-wide':
      return deepMlpLayout(WIDE_MLP);
  }
}

/** An MLP layout of any size (tests use tiny ones for exhaustive gradient checks). */
export function mlpLayout(options: MlpOptions): ModelLayout {
  const { inputSize, hiddenSize, classCount } = options;
  return denseStack('mlp', inputSize, [hiddenSize], classCount);
}

/** A wide-MLP layout of any sizes: dense layers dense1, dense2, … with a ReLU between each two. */
export function deepMlpLayout(options: DeepMlpOptions): ModelLayout {
  return denseStack('mlp-wide', options.inputSize, options.hiddenSizes, options.classCount);
}

function denseStack(
  kind: 'mlp' | 'mlp-wide',
  inputSize: number,
  hiddenSizes: readonly number[],
  classCount: number,
): ModelLayout {
  const parameters = new ParameterAllocator();
  const layers: Layer[] = [];
  let width = inputSize;
  hiddenSizes.forEach((hidden, i) => {
    layers.push(denseLayer(parameters, `dense${i + 1}`, width, hidden), {
      type: 'relu',
      inputSize: hidden,
      outputSize: hidden,
    });
    width = hidden;
  });
  layers.push(denseLayer(parameters, `dense${hiddenSizes.length + 1}`, width, classCount));
  return {
    kind,
    input: { channels: 1, height: 1, width: inputSize },
    inputSize,
    classCount,
    layers,
    tensors: parameters.tensors,
    parameterCount: parameters.count,
  };
}

/** A CNN layout of any size; every pooled feature map must have even height and width. */
export function cnnLayout(options: CnnOptions): ModelLayout {
  const parameters = new ParameterAllocator();
  const { input, kernelSize, conv1Channels, conv2Channels, classCount } = options;
  const conv1 = convLayer(parameters, 'conv1', input, conv1Channels, kernelSize);
  const pool1 = maxPoolLayer(conv1.output);
  const conv2 = convLayer(parameters, 'conv2', pool1.output, conv2Channels, kernelSize);
  const pool2 = maxPoolLayer(conv2.output);
  const layers: Layer[] = [
    conv1,
    { type: 'relu', inputSize: conv1.outputSize, outputSize: conv1.outputSize },
    pool1,
    conv2,
    { type: 'relu', inputSize: conv2.outputSize, outputSize: conv2.outputSize },
    pool2,
    denseLayer(parameters, 'dense', pool2.outputSize, classCount),
  ];
  return {
    kind: 'cnn',
    input,
    inputSize: featureSize(input),
    classCount,
    layers,
    tensors: parameters.tensors,
    parameterCount: parameters.count,
  };
}

/** The elements of `tensor` inside a flat parameter (or gradient) vector, as a view. */
export function tensorView<T extends Float32Array | Float64Array>(flat: T, tensor: ParameterTensor): T {
  return flat.subarray(tensor.offset, tensor.offset + tensor.size) as T;
}

/** The tensor called `name`; throws if the layout has none. */
export function findTensor(layout: ModelLayout, name: string): ParameterTensor {
  const tensor = layout.tensors.find((candidate) => candidate.name === name);
  if (tensor === undefined) throw new RangeError(`${layout.kind} has no parameter tensor '${name}'`);
  return tensor;
}

/** Number of elements of a feature map. */
export function featureSize(shape: FeatureShape): number {
  return shape.channels * shape.height * shape.width;
}

/** Hands out consecutive ranges of the flat vector, in creation order. */
class ParameterAllocator {
  readonly tensors: ParameterTensor[] = [];
  count = 0;

  add(name: string, role: 'weight' | 'bias', shape: Shape, fanIn: number): ParameterTensor {
    const size = shape[0] * shape[1];
    const tensor: ParameterTensor = { name, role, shape, offset: this.count, size, fanIn };
    this.tensors.push(tensor);
    this.count += size;
    return tensor;
  }
}

function denseLayer(parameters: ParameterAllocator, name: string, inputSize: number, outputSize: number): DenseLayer {
  return {
    type: 'dense',
    name,
    inputSize,
    outputSize,
    weight: parameters.add(`${name}.weight`, 'weight', [inputSize, outputSize], inputSize),
    bias: parameters.add(`${name}.bias`, 'bias', [1, outputSize], inputSize),
  };
}

function convLayer(
  parameters: ParameterAllocator,
  name: string,
  input: FeatureShape,
  outChannels: number,
  kernelSize: number,
): Conv2dLayer {
  const output: FeatureShape = {
    channels: outChannels,
    height: input.height - kernelSize + 1,
    width: input.width - kernelSize + 1,
  };
  if (output.height < 1 || output.width < 1) {
    throw new RangeError(
      `${name}: a ${kernelSize}×${kernelSize} kernel does not fit a ${input.height}×${input.width} input`,
    );
  }
  const patchSize = input.channels * kernelSize * kernelSize;
  return {
    type: 'conv2d',
    name,
    input,
    output,
    kernelSize,
    inputSize: featureSize(input),
    outputSize: featureSize(output),
    weight: parameters.add(`${name}.weight`, 'weight', [outChannels, patchSize], patchSize),
    bias: parameters.add(`${name}.bias`, 'bias', [1, outChannels], patchSize),
  };
}

function maxPoolLayer(input: FeatureShape): MaxPool2dLayer {
  if (input.height % 2 !== 0 || input.width % 2 !== 0) {
    throw new RangeError(`2×2 max-pooling needs even sizes, got ${input.height}×${input.width}`);
  }
  const output: FeatureShape = { channels: input.channels, height: input.height / 2, width: input.width / 2 };
  return { type: 'maxpool2d', input, output, inputSize: featureSize(input), outputSize: featureSize(output) };
}
