/** The aggregator's ModelRuntime on core/model's CPU backend, evaluating on a held-out Dataset. */
import type { Dataset } from '../../core/data';
import type { TrainingBackend } from '../../core/model/backend';
import { createCpuBackend } from '../../core/model/cpu/backend';
import { evaluate } from '../../core/model/evaluate';
import { heInitialize } from '../../core/model/init';
import { createModelLayout, type ModelKind, type ModelLayout } from '../../core/model/layout';
import type { ModelRuntime } from './model';

/** A CPU ModelRuntime; `test` is the held-out split (the 2,000 test digits). */
export function createCpuModelRuntime(test: Dataset): ModelRuntime {
  const layouts = new Map<ModelKind, ModelLayout>();
  const backends = new Map<ModelKind, TrainingBackend>();
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
    initialWeights: (kind, seed) => heInitialize(layout(kind), seed),
    evaluate(kind, params) {
      let backend = backends.get(kind);
      if (!backend) backends.set(kind, (backend = createCpuBackend(layout(kind))));
      const job = queue.then(() => evaluate(backend, params, test.images, test.labels, test.count));
      queue = job.catch(() => undefined);
      return job;
    },
  };
}
