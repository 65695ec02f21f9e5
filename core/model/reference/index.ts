/** The Float64 reference model: the specification for the CPU and WebGPU backends. */
export { referenceForward, referenceLogits, referenceLoss, referenceLossAndGradient, type ReferenceResult } from './network';
export { denseForward, denseBackward, type DenseGradients } from './dense';
export { conv2dForward, conv2dBackward, type Conv2dGradients } from './conv2d';
export { maxPool2dForward, maxPool2dBackward } from './maxpool2d';
export { reluForward, reluBackward } from './relu';
export { softmaxCrossEntropyLoss, softmaxCrossEntropyBackward, logSumExp } from './softmax-cross-entropy';
