/**
 * What the aggregator needs from the model, as one injected dependency:
 * layouts, initial weights and held-out evaluation (the SGD step is
 * core/training/modelUpdate.ts's, which the workers' replicas share). The CPU
 * implementation is in cpuModel.ts; tests may inject their own.
 */
import type { DatasetName } from '../../core/data/datasets';
import type { ModelKind, ModelLayout } from '../../core/model/layout';

/** Loss and accuracy of a model on the held-out test digits. */
export interface Evaluation {
  readonly loss: number;
  readonly accuracy: number;
}

/** The model operations of the aggregator. */
export interface ModelRuntime {
  /** The parameter layout of a model kind (cached: the same object every call). */
  layout(kind: ModelKind): ModelLayout;
  /** The initial weights of a run: a pure function of kind and seed. */
  initialWeights(kind: ModelKind, seed: number): Float32Array;
  /**
   * Evaluates `params` on the held-out test set of `dataset`, MNIST when absent, or on its first `examples` when
   * given (the caller passes a copy of the weights it will not change).
   */
  evaluate(kind: ModelKind, params: Float32Array, dataset?: DatasetName, examples?: number): Promise<Evaluation>;
}
