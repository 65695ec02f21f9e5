/**
 * The Float64 reference model: the specification every fast backend is
 * tested against. Plain loops, fresh arrays, no tricks. Parameters are a
 * flat Float64Array laid out by a ModelLayout.
 */
import { tensorView, type Layer, type ModelLayout } from '../layout';
import { conv2dBackward, conv2dForward } from './conv2d';
import { denseBackward, denseForward } from './dense';
import { maxPool2dBackward, maxPool2dForward } from './maxpool2d';
import { reluBackward, reluForward } from './relu';
import { softmaxCrossEntropyBackward, softmaxCrossEntropyLoss } from './softmax-cross-entropy';

/** Loss, logits and the gradient of every parameter, in Float64. */
export interface ReferenceResult {
  /** Mean softmax cross-entropy over the batch. */
  readonly loss: number;
  /** batch × classCount. */
  readonly logits: Float64Array;
  /** dLoss/dParams, laid out like the parameters. */
  readonly gradient: Float64Array;
}

/** Every activation of a forward pass: activations[0] is the input, activations[i + 1] the output of layer i. */
export function referenceForward(
  layout: ModelLayout,
  params: Float64Array,
  images: ArrayLike<number>,
  batch: number,
): Float64Array[] {
  checkSizes(layout, params, images, batch);
  const activations: Float64Array[] = [Float64Array.from({ length: batch * layout.inputSize }, (_, i) => images[i]!)];
  for (const layer of layout.layers) {
    activations.push(layerForward(layer, params, activations[activations.length - 1]!, batch));
  }
  return activations;
}

/** Logits (batch × classCount) of the reference model. */
export function referenceLogits(
  layout: ModelLayout,
  params: Float64Array,
  images: ArrayLike<number>,
  batch: number,
): Float64Array {
  return referenceForward(layout, params, images, batch).at(-1)!;
}

/** Forward, loss, and backpropagation through every layer in reverse. */
export function referenceLossAndGradient(
  layout: ModelLayout,
  params: Float64Array,
  images: ArrayLike<number>,
  labels: Uint8Array,
  batch: number,
): ReferenceResult {
  const activations = referenceForward(layout, params, images, batch);
  const logits = activations.at(-1)!;
  const loss = softmaxCrossEntropyLoss(logits, labels, batch, layout.classCount);
  const gradient = new Float64Array(layout.parameterCount);
  let dy = softmaxCrossEntropyBackward(logits, labels, batch, layout.classCount);
  for (let i = layout.layers.length - 1; i >= 0; i--) {
    dy = layerBackward(layout.layers[i]!, params, activations[i]!, dy, gradient, batch);
  }
  return { loss, logits, gradient };
}

function layerForward(layer: Layer, params: Float64Array, x: Float64Array, batch: number): Float64Array {
  switch (layer.type) {
    case 'dense':
      return denseForward(
        x,
        tensorView(params, layer.weight),
        tensorView(params, layer.bias),
        batch,
        layer.inputSize,
        layer.outputSize,
      );
    case 'conv2d':
      return conv2dForward(layer, x, tensorView(params, layer.weight), tensorView(params, layer.bias), batch);
    case 'relu':
      return reluForward(x);
    case 'maxpool2d':
      return maxPool2dForward(layer, x, batch);
  }
}

/** Writes the layer's parameter gradients into `gradient` and returns dL/dx. */
function layerBackward(
  layer: Layer,
  params: Float64Array,
  x: Float64Array,
  dy: Float64Array,
  gradient: Float64Array,
  batch: number,
): Float64Array {
  switch (layer.type) {
    case 'dense': {
      const grads = denseBackward(x, tensorView(params, layer.weight), dy, batch, layer.inputSize, layer.outputSize);
      tensorView(gradient, layer.weight).set(grads.dWeight);
      tensorView(gradient, layer.bias).set(grads.dBias);
      return grads.dx;
    }
    case 'conv2d': {
      const grads = conv2dBackward(layer, x, tensorView(params, layer.weight), dy, batch);
      tensorView(gradient, layer.weight).set(grads.dKernel);
      tensorView(gradient, layer.bias).set(grads.dBias);
      return grads.dx;
    }
    case 'relu':
      return reluBackward(x, dy);
    case 'maxpool2d':
      return maxPool2dBackward(layer, x, dy, batch);
  }
}

function checkSizes(layout: ModelLayout, params: Float64Array, images: ArrayLike<number>, batch: number): void {
  if (params.length !== layout.parameterCount)
    throw new RangeError(`${layout.kind}: ${params.length} parameters, expected ${layout.parameterCount}`);
  if (!Number.isInteger(batch) || batch < 1) throw new RangeError(`batch must be a positive integer, got ${batch}`);
  if (images.length < batch * layout.inputSize)
    throw new RangeError(`${images.length} pixels do not hold ${batch} images of ${layout.inputSize}`);
}
