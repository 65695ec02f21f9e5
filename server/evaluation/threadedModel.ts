/**
 * A ModelRuntime whose evaluations run on worker threads: each of `threads`
 * evaluates an equal share of the held-out examples and the main thread adds
 * up their sums. The event loop stays free while a model is evaluated, and a
 * machine whose cores would otherwise wait (the swarm's and the comparison's
 * workers wait for the evaluated round) uses them all. Layouts and initial
 * weights are the CPU runtime's (server/model/cpuModel.ts); the evaluation is the same
 * core/model/evaluate.ts, so the result differs from cpuModel's only in the
 * rounding of the loss's sum.
 */
import type { Worker } from 'node:worker_threads';
import { DEFAULT_DATASET, type Dataset, type DatasetName } from '../../core/data';
import type { ModelKind } from '../../core/model/layout';
import { DEFAULT_DATA_DIRECTORY } from '../data/fileReader';
import { createCpuModelRuntime } from '../model/cpuModel';
import type { Evaluation, ModelRuntime } from '../model/model';
import { startTsWorker } from '../tsWorker';

/** What an evaluation thread starts with. */
export interface EvalThreadData {
  /** Where the datasets' files are (public/data/ by default). */
  readonly directory: string;
}

/** One thread's share of an evaluation: part `part` of `parts` equal shares of the first `examples`. */
export interface EvalRequest {
  readonly id: number;
  readonly kind: ModelKind;
  readonly dataset: DatasetName;
  readonly params: Float32Array;
  readonly examples: number;
  readonly part: number;
  readonly parts: number;
}

/** A thread's answer: the sums over its share, or why it failed. */
export type EvalReply =
  | { readonly id: number; readonly examples: number; readonly lossSum: number; readonly correct: number }
  | { readonly id: number; readonly error: string };

/** A ModelRuntime that can be closed (its threads ended). */
export interface ClosableModelRuntime extends ModelRuntime {
  close(): Promise<void>;
}

const ENTRY = new URL('./evalThread.ts', import.meta.url);

/**
 * Evaluates on `threads` worker threads reading the datasets from `directory`; `test` (MNIST's held-out split) is
 * what the CPU runtime it takes layouts and initial weights from holds. The threads start with the first evaluation.
 */
export function createThreadedModelRuntime(
  test: Dataset,
  { threads, directory = DEFAULT_DATA_DIRECTORY }: { readonly threads: number; readonly directory?: string },
): ClosableModelRuntime {
  if (!Number.isInteger(threads) || threads < 1) throw new RangeError(`threads must be a positive integer`);
  const cpu = createCpuModelRuntime(test);
  const pending = new Map<number, (reply: EvalReply) => void>();
  let workers: Worker[] | null = null;
  let nextId = 0;
  const start = (): Worker[] =>
    Array.from({ length: threads }, () => {
      const worker = startTsWorker(ENTRY, { directory } satisfies EvalThreadData);
      worker.on('message', (reply: EvalReply) => {
        pending.get(reply.id)?.(reply);
        pending.delete(reply.id);
      });
      // A thread that dies fails what it owed; the next evaluation starts a fresh set.
      worker.on('error', (error) => {
        for (const [id, answer] of pending) answer({ id, error: `an evaluation thread failed: ${error.message}` });
        pending.clear();
        void Promise.all((workers ?? []).map((w) => w.terminate()));
        workers = null;
      });
      return worker;
    });
  const ask = (worker: Worker, request: EvalRequest) =>
    new Promise<EvalReply>((resolve) => {
      pending.set(request.id, resolve);
      worker.postMessage(request);
    });
  return {
    layout: cpu.layout,
    initialWeights: cpu.initialWeights,
    async evaluate(kind, params, dataset = DEFAULT_DATASET, examples = Number.MAX_SAFE_INTEGER): Promise<Evaluation> {
      const running = (workers ??= start());
      const replies = await Promise.all(
        running.map((worker, part) =>
          ask(worker, { id: nextId++, kind, dataset, params, examples, part, parts: running.length }),
        ),
      );
      let count = 0;
      let lossSum = 0;
      let correct = 0;
      for (const reply of replies) {
        if ('error' in reply) throw new Error(reply.error);
        count += reply.examples;
        lossSum += reply.lossSum;
        correct += reply.correct;
      }
      return { loss: lossSum / count, accuracy: correct / count };
    },
    async close() {
      const running = workers;
      workers = null;
      await Promise.all((running ?? []).map((w) => w.terminate()));
    },
  };
}
