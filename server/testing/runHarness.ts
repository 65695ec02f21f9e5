/**
 * A run on a fake model runtime and a FakeScheduler, for the unit tests of
 * server/run/'s round state machine: no sockets, no timers, no MNIST.
 */
import { encodeLayer } from '../../core/codec';
import { createModelLayout, type ModelLayout } from '../../core/model/layout';
import {
  asRunId,
  asWorkerId,
  type RoundMetrics,
  type RoundOpen,
  type RunConfigPatch,
  type WorkerId,
} from '../../core/protocol';
import { DEFAULT_RUN_CONFIG } from '../../core/schema';
import type { Evaluation, ModelRuntime } from '../model/model';
import { ProtocolFault } from '../protocol/fault';
import type { SubmissionEnvelope } from '../protocol/validation';
import { Run, type RunDeps, type RunHooks, type RunSnapshot } from '../run/run';
import { applyConfigPatch } from '../run/runConfig';
import { FakeScheduler } from './fakeScheduler';

const LAYOUT = createModelLayout('mlp');
export const [A, B, C, D] = [1, 2, 3, 4].map(asWorkerId) as [WorkerId, WorkerId, WorkerId, WorkerId];

/** A model runtime whose evaluations the test resolves by hand. */
function fakeModel(): ModelRuntime & { evaluations: { resolve(e: Evaluation): void }[] } {
  const evaluations: { resolve(e: Evaluation): void }[] = [];
  return {
    evaluations,
    layout: (): ModelLayout => LAYOUT,
    initialWeights: (_kind: unknown, seed: number) => new Float32Array(LAYOUT.parameterCount).fill(seed / 1000),
    evaluate: () => new Promise<Evaluation>((resolve) => evaluations.push({ resolve })),
  };
}

/** What a run told its hooks. */
interface Recorded {
  opened: { workers: readonly WorkerId[]; message: RoundOpen }[];
  closed: RoundMetrics[];
  errors: unknown[];
}

interface MakeOptions {
  readonly patch?: RunConfigPatch;
  readonly scheduler?: FakeScheduler;
  readonly model?: ReturnType<typeof fakeModel>;
  readonly hooks?: Partial<RunHooks>;
  readonly id?: string;
  /** Combines a closing round's estimates instead of the run (a cluster's seam; here: to make closing fail). */
  readonly combine?: RunDeps['combine'];
  /** Restore this snapshot (as a restarted server does) instead of creating a run. */
  readonly snapshot?: RunSnapshot;
}

/** A created run on a fake model and clock, recording what it tells its hooks. */
export function makeRun(options: MakeOptions = {}) {
  const scheduler = options.scheduler ?? new FakeScheduler();
  const model = options.model ?? fakeModel();
  const seen: Recorded = { opened: [], closed: [], errors: [] };
  const hooks: RunHooks = {
    openRound: (_run, deliveries) => {
      for (const { workers, message } of deliveries) seen.opened.push({ workers, message });
    },
    roundClosed: (_run, metrics) => seen.closed.push(metrics),
    changed: () => undefined,
    ...options.hooks,
  };
  const config = applyConfigPatch(DEFAULT_RUN_CONFIG, {
    scheme: 'none',
    evalEvery: 1000,
    maxRounds: 100,
    roundDeadlineMs: 1000,
    ...options.patch,
  });
  const deps = {
    model,
    hooks,
    scheduler,
    onError: (error: unknown) => seen.errors.push(error),
    ...(options.combine === undefined ? {} : { combine: options.combine }),
  };
  const run = options.snapshot
    ? new Run(deps, options.snapshot)
    : Run.create(deps, asRunId(options.id ?? 'r'), config, 'created');
  return { run, scheduler, model, seen };
}

/** Members `ids` joined and connected, the run started and its first round opened. */
export function started(ids: readonly WorkerId[], options: MakeOptions = {}) {
  const made = makeRun(options);
  for (const id of ids) {
    made.run.addMember(id);
    made.run.setConnected(id, true);
  }
  made.run.start();
  made.scheduler.flush();
  return made;
}

/** An honest dense submission: every entry of every layer `value`. */
export function submission(
  run: Run,
  workerId: WorkerId,
  value = 0.01,
  version: number = run.version,
): SubmissionEnvelope {
  return {
    runId: run.id,
    workerId,
    version: version as SubmissionEnvelope['version'],
    layers: LAYOUT.tensors.map((t, layer) =>
      encodeLayer({ scheme: 'none', shape: t.shape, values: new Float32Array(t.size).fill(value) }, layer),
    ),
    loss: 2,
    layerStats: LAYOUT.tensors.map(() => ({ closedForm: 0, realised: 0, gradientNormSq: 1 })),
    computeMs: 1,
  };
}

export function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof ProtocolFault) return error.code;
    throw error;
  }
  return 'accepted';
}
