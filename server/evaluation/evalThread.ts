/**
 * The body of one evaluation thread of threadedModel.ts: it evaluates its
 * share of a held-out split, reading the split from public/data/ the first
 * time a dataset is asked for, and answers with the sums the main thread adds
 * up (loss summed over its examples, how many it classified correctly).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Dataset, DatasetName } from '../../core/data';
import type { TrainingBackend } from '../../core/model/backend';
import { createCpuBackend } from '../../core/model/cpu/backend';
import { evaluate } from '../../core/model/evaluate';
import { createModelLayout, INPUT_SIZE, type ModelKind } from '../../core/model/layout';
import { loadTestSet } from '../data/testSets';
import type { EvalRequest, EvalReply, EvalThreadData } from './threadedModel';

const { directory } = workerData as EvalThreadData;
const testSets = new Map<DatasetName, Promise<Dataset>>();
const backends = new Map<ModelKind, TrainingBackend>();

async function evaluateShare(request: EvalRequest): Promise<EvalReply> {
  let held = testSets.get(request.dataset);
  if (held === undefined) {
    held = loadTestSet(request.dataset, directory);
    testSets.set(request.dataset, held);
    // A failed load is tried again next time (the files may be made meanwhile).
    held.catch(() => testSets.delete(request.dataset));
  }
  const { images, labels, count } = await held;
  // This thread's share of the first min(examples, count) examples: [start, end).
  const total = Math.min(request.examples, count);
  const start = Math.floor((request.part * total) / request.parts);
  const end = Math.floor(((request.part + 1) * total) / request.parts);
  if (end === start) return { id: request.id, examples: 0, lossSum: 0, correct: 0 };
  let backend = backends.get(request.kind);
  if (backend === undefined) backends.set(request.kind, (backend = createCpuBackend(createModelLayout(request.kind))));
  const share = await evaluate(
    backend,
    request.params,
    images.subarray(start * INPUT_SIZE, end * INPUT_SIZE),
    labels.subarray(start, end),
    end - start,
  );
  const examples = end - start;
  return { id: request.id, examples, lossSum: share.loss * examples, correct: Math.round(share.accuracy * examples) };
}

parentPort!.on('message', (request: EvalRequest) => {
  evaluateShare(request).then(
    (reply) => parentPort!.postMessage(reply),
    (error: unknown) =>
      parentPort!.postMessage({ id: request.id, error: error instanceof Error ? error.message : String(error) }),
  );
});
