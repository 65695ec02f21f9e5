/** Models (layouts, initialisation), the training-backend contract, the CPU backend, evaluation and the optimiser. */
export {
  CLASS_COUNT,
  DEFAULT_CNN,
  DEFAULT_MLP,
  WIDE_MLP,
  deepMlpLayout,
  type DeepMlpOptions,
  INPUT_SIZE,
  MODEL_KINDS,
  cnnLayout,
  createModelLayout,
  featureSize,
  findTensor,
  mlpLayout,
  tensorView,
  type CnnOptions,
  type Conv2dLayer,
  type DenseLayer,
  type FeatureShape,
  type Layer,
  type MaxPool2dLayer,
  type MlpOptions,
  type ModelKind,
  type ModelLayout,
  type ParameterTensor,
  type ReluLayer,
} from './layout';
export { heInitialise, INIT_STREAM_TAG } from './init';
export type { BackendKind, DeviceTrainingBackend, GradientFactors, LossAndGradient, TrainingBackend } from './backend';
export { createCpuBackend } from './cpu/backend';
export { evaluate, type EvaluateOptions, type Evaluation } from './evaluate';
export { sgdMomentumStep } from './optimiser';
