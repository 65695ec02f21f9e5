/** The aggregator's ModelRuntime on core/model's CPU backend, evaluating on a held-out Dataset. */
import { DATASETS, DEFAULT_DATASET, type Dataset, type DatasetName } from '../../core/data';
import type { TrainingBackend } from '../../core/model/backend';
import { createCpuBackend } from '../../core/model/cpu/backend';
import { evaluate } from '../../core/model/evaluate';
import { heInitialise } from '../../core/model/init';
import { createModelLayout, type ModelKind, type ModelLayout } from '../../core/model/layout';
import type { ModelRuntime } from './model';

/**
 * The CPU backend computes synchronously, so an evaluation would hold the event loop for its whole length (tens of
 * seconds for Fashion-MNIST's 10,000 test images on a loaded machine: long enough for socket.io to drop every
 * connection for a missed ping). Each chunk of evaluate() first yields a turn of the event loop instead.
 */
function yieldingBetweenChunks(backend: TrainingBackend): TrainingBackend {
  return {
    kind: backend.kind,
    lossAndGradient: (params, images, labels, batch) => backend.lossAndGradient(params, images, labels, batch),
    predict: async (params, images, batch) => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      return backend.predict(params, images, batch);
    },
  };
}

/** Loads the held-out split of a dataset other than MNIST, the first time a run evaluates on it. */
export type TestSetLoader = (dataset: DatasetName) => Promise<Dataset>;

/**
 * A CPU ModelRuntime; `test` is MNIST's held-out split (the 2,000 test digits). Another dataset's test split comes
 * from `loadTest` when a run first evaluates on it (so a server whose runs are all MNIST never reads Fashion-MNIST's
 * 55 MB); without a loader, such an evaluation fails naming the dataset.
 */
export function createCpuModelRuntime(test: Dataset, loadTest?: TestSetLoader): ModelRuntime {
  const layouts = new Map<ModelKind, ModelLayout>();
  const backends = new Map<ModelKind, TrainingBackend>();
  const testSets = new Map<DatasetName, Promise<Dataset>>([[DEFAULT_DATASET, Promise.resolve(test)]]);
  const testSet = (dataset: DatasetName): Promise<Dataset> => {
    let found = testSets.get(dataset);
    if (found === undefined) {
      found =
        loadTest === undefined
          ? Promise.reject(new Error(`this server has no ${DATASETS[dataset].title} test set`))
          : loadTest(dataset);
      // A failed load is tried again at the next evaluation (the files may be made meanwhile).
      found.catch(() => testSets.delete(dataset));
      testSets.set(dataset, found);
    }
    return found;
  };
  const layout = (kind: ModelKind): ModelLayout => {
    let found = layouts.get(kind);
    if (!found) layouts.set(kind, (found = createModelLayout(kind)));
    return found;
  };
  // Evaluations of different runs could interleave at their awaits; the CPU
  // backend reuses workspaces, so they are chained one after another.
  let queue: Promise<unknown> = Promise.resolve();
  return {
    layout,
    initialWeights: (kind, seed) => heInitialise(layout(kind), seed),
    evaluate(kind, params, dataset = DEFAULT_DATASET, examples = Infinity) {
      let backend = backends.get(kind);
      if (!backend) backends.set(kind, (backend = yieldingBetweenChunks(createCpuBackend(layout(kind)))));
      const job = queue
        .then(() => testSet(dataset))
        .then((held) => evaluate(backend, params, held.images, held.labels, Math.min(examples, held.count)));
      queue = job.catch(() => undefined);
      return job;
    },
  };
}
