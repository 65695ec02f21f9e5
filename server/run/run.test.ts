/**
 * The round state machine of server/run/run.ts on a hand-driven clock: when a
 * round closes (everyone in, or the deadline with the quorum), what happens
 * when its participants leave (abandoned, reopened), a reset while the
 * held-out evaluation is in flight, a fault inside a scheduled callback
 * (that run pauses with its reason; another run on the same clock goes on),
 * and the first round after a restart (it waits for the class to return).
 * No sockets, no timers, no MNIST: a fake model runtime and a FakeScheduler.
 */
import { describe, expect, it } from 'vitest';
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
import { ProtocolFault } from '../protocol/fault';
import type { Evaluation, ModelRuntime } from '../model/model';
import { Run, type RunDeps, type RunHooks, type RunSnapshot } from './run';
import { applyConfigPatch } from './runConfig';
import { FakeScheduler } from '../testing/fakeScheduler';
import { parseSubmission, type SubmissionEnvelope } from '../protocol/validation';

const LAYOUT = createModelLayout('mlp');
const [A, B, C, D] = [1, 2, 3, 4].map(asWorkerId) as [WorkerId, WorkerId, WorkerId, WorkerId];

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
function makeRun(options: MakeOptions = {}) {
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
function started(ids: readonly WorkerId[], options: MakeOptions = {}) {
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
function submission(run: Run, workerId: WorkerId, value = 0.01, version: number = run.version): SubmissionEnvelope {
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

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof ProtocolFault) return error.code;
    throw error;
  }
  return 'accepted';
}

describe('Run: closing a round', () => {
  it('closes as soon as every participant reported, and cancels its deadline', () => {
    const { run, scheduler, seen } = started([A, B]);
    expect(seen.opened).toHaveLength(1);
    expect([...seen.opened[0]!.workers].sort()).toEqual([A, B]);
    expect(scheduler.pendingTimers).toBe(1);
    run.acceptGradient(A, submission(run, A));
    expect(run.version).toBe(0);
    run.acceptGradient(B, submission(run, B));
    expect(run.version).toBe(1);
    expect(seen.closed.map((m) => m.contributors)).toEqual([2]);
    expect(scheduler.pendingTimers).toBe(0);
    // The next round opens on the next turn, not inside the ack of the last gradient.
    expect(seen.opened).toHaveLength(1);
    scheduler.flush();
    expect(seen.opened.map((o) => o.message.version)).toEqual([0, 1]);
  });

  it('records each contributor’s split of its time and its clock, and refuses a malformed one', () => {
    const { run, seen } = started([A, B]);
    const times = { compressMs: 0.4, encodeMs: 0.1, clock: 'thread-cpu' } as const;
    const timed = { ...submission(run, A), computeMs: 2, times };
    const refused = (bad: unknown) => refusal(() => parseSubmission({ ...timed, times: bad }));
    expect(refusal(() => parseSubmission(timed))).toBe('accepted');
    expect(refused({ ...times, clock: 'sundial' })).toBe('bad-message');
    expect(refused({ ...times, compressMs: -1 })).toBe('bad-message');
    expect(refused({ ...times, encodeMs: Number.NaN })).toBe('bad-message');
    expect(refused({ ...times, compressMs: 1.95 })).toBe('bad-message'); // with encodeMs, more than computeMs
    expect(refused('fast')).toBe('bad-message');
    run.acceptGradient(A, parseSubmission(timed));
    run.acceptGradient(B, submission(run, B));
    const workers = seen.closed[0]!.workers;
    expect(workers.find((w) => w.workerId === A)).toMatchObject({ computeMs: 2, times });
    expect(workers.find((w) => w.workerId === B)!.times).toBeUndefined();
  });

  it('waits for the deadline, then closes once the quorum is in, and not before', () => {
    const { run, scheduler, seen } = started([A, B, C], { patch: { quorum: { fraction: 0.5, minimum: 1 } } });
    run.acceptGradient(A, submission(run, A));
    scheduler.advance(999);
    expect(run.version).toBe(0);
    scheduler.advance(1);
    // The deadline passed with 1 of the ⌈0.5 · 3⌉ = 2 the quorum needs: still open.
    expect(run.version).toBe(0);
    expect(run.round?.deadlinePassed).toBe(true);
    run.acceptGradient(B, submission(run, B));
    expect(run.version).toBe(1);
    expect(seen.closed[0]).toMatchObject({ participants: 3, contributors: 2 });
    // C's gradient for the closed round is now stale.
    scheduler.flush();
    expect(refusal(() => run.acceptGradient(C, submission(run, C, 0.01, 0)))).toBe('stale-version');
  });

  it('a quorum larger than those left shrinks with departures, so a round never stalls', () => {
    const { run, scheduler } = started([A, B, C], { patch: { quorum: { fraction: 1, minimum: 3 } } });
    run.acceptGradient(A, submission(run, A));
    run.acceptGradient(B, submission(run, B));
    scheduler.advance(5000);
    expect(run.version).toBe(0); // 2 of 3, C still a participant
    run.setConnected(C, false);
    expect(run.version).toBe(1);
  });

  it('refuses gradients of workers that joined mid-round, twice, or for another version', () => {
    const { run, scheduler } = started([A, B]);
    run.addMember(C);
    run.setConnected(C, true);
    expect(refusal(() => run.acceptGradient(C, submission(run, C)))).toBe('not-participant');
    expect(refusal(() => run.acceptGradient(A, submission(run, A, 0.01, 1)))).toBe('future-version');
    run.acceptGradient(A, submission(run, A));
    expect(refusal(() => run.acceptGradient(A, submission(run, A)))).toBe('duplicate');
    run.acceptGradient(B, submission(run, B));
    scheduler.flush();
    // C is asked in the next round.
    expect(run.round?.participants.has(C)).toBe(true);
  });
});

describe('Run: after a restart', () => {
  /** A run whose last round had A, B, C and D as contributors, restored from its snapshot on a fresh clock. */
  function restoredAfterFour() {
    const before = started([A, B, C, D]);
    for (const id of [A, B, C, D]) before.run.acceptGradient(id, submission(before.run, id));
    expect(before.seen.closed.map((m) => m.contributors)).toEqual([4]);
    return makeRun({ snapshot: before.run.snapshot() });
  }

  it("opens its first round once a quorum of the last round's contributors is back, not with the first tab", () => {
    const { run, scheduler, seen } = restoredAfterFour();
    expect(run.status).toBe('running');
    run.setConnected(A, true);
    scheduler.flush();
    expect(seen.opened).toHaveLength(0); // 1 of the ⌈0.5 · 4⌉ = 2 expected back
    run.setConnected(B, true);
    scheduler.flush();
    expect(seen.opened.map((o) => [o.message.version, [...o.workers].sort()])).toEqual([[1, [A, B]]]);
  });

  it('waits at most one round deadline after the first one back, then goes on with whoever is there', () => {
    const { run, scheduler, seen } = restoredAfterFour();
    scheduler.advance(5000);
    run.setConnected(C, true);
    scheduler.advance(999);
    expect(seen.opened).toHaveLength(0);
    scheduler.advance(1);
    expect(seen.opened.map((o) => o.workers)).toEqual([[C]]);
    run.acceptGradient(C, submission(run, C));
    scheduler.flush();
    // Later rounds open at once, as in any run.
    expect(seen.opened.map((o) => o.message.version)).toEqual([1, 2]);
  });
});

describe('Run: snapshots', () => {
  it('a snapshot stays as it was when later rounds close (the checkpoint store encodes it later)', () => {
    const { run, scheduler } = started([A]);
    run.acceptGradient(A, submission(run, A));
    const snapshot = run.snapshot();
    scheduler.flush();
    run.acceptGradient(A, submission(run, A));
    expect(run.history).toHaveLength(2);
    expect([snapshot.version, snapshot.history.length]).toEqual([1, 1]);
  });
});

describe('Run: abandoned rounds', () => {
  it('reopens the same version when everyone asked has left, for whoever comes back', () => {
    const { run, scheduler, seen } = started([A, B]);
    run.setConnected(A, false);
    run.setConnected(B, false);
    expect(run.round).toBeNull();
    expect(scheduler.pendingTimers).toBe(0); // the abandoned round's deadline is gone
    scheduler.advance(10_000);
    expect(seen.opened).toHaveLength(1); // nobody to ask: idle
    run.setConnected(B, true);
    scheduler.flush();
    expect(seen.opened.map((o) => [o.message.version, o.workers])).toEqual([
      [0, [A, B]],
      [0, [B]],
    ]);
    run.acceptGradient(B, submission(run, B));
    expect(run.version).toBe(1);
    expect(seen.closed).toHaveLength(1);
  });

  it('pause abandons the round (late gradients refused) and resume reopens it', () => {
    const { run, scheduler, seen } = started([A, B]);
    run.acceptGradient(A, submission(run, A));
    run.pause();
    expect(refusal(() => run.acceptGradient(B, submission(run, B)))).toBe('round-closed');
    scheduler.advance(5000);
    expect(seen.closed).toHaveLength(0);
    run.resume();
    scheduler.flush();
    expect(seen.opened.map((o) => o.message.version)).toEqual([0, 0]);
    // A's gradient went with the abandoned round: the reopened one waits for both.
    run.acceptGradient(B, submission(run, B));
    expect(run.version).toBe(0);
    run.acceptGradient(A, submission(run, A));
    expect(run.version).toBe(1);
  });
});

describe('Run: evaluation', () => {
  it('opens no round while the evaluation runs, then publishes it and goes on', async () => {
    const { run, scheduler, model, seen } = started([A], { patch: { evalEvery: 1 } });
    run.acceptGradient(A, submission(run, A));
    expect(run.version).toBe(1);
    expect(model.evaluations).toHaveLength(1);
    // A worker arriving meanwhile would open a round on the model being evaluated: it waits.
    run.addMember(B);
    run.setConnected(B, true);
    scheduler.advance(10_000);
    expect(seen.opened).toHaveLength(1);
    expect(seen.closed).toHaveLength(0);
    model.evaluations[0]!.resolve({ loss: 0.5, accuracy: 0.75 });
    await Promise.resolve();
    await Promise.resolve();
    expect(seen.closed.map((m) => [m.version, m.testAccuracy])).toEqual([[0, 0.75]]);
    scheduler.flush();
    expect(seen.opened.map((o) => [o.message.version, o.workers])).toEqual([
      [0, [A]],
      [1, [A, B]],
    ]);
  });

  it('a reset during the evaluation discards its result and leaves the run at version 0', async () => {
    const { run, scheduler, model, seen } = started([A], { patch: { evalEvery: 1 } });
    run.acceptGradient(A, submission(run, A));
    expect(model.evaluations).toHaveLength(1);
    run.reset();
    expect(run.version).toBe(0);
    expect(run.history).toEqual([]);
    model.evaluations[0]!.resolve({ loss: 0.5, accuracy: 0.75 });
    await Promise.resolve();
    await Promise.resolve();
    scheduler.flush();
    expect(seen.closed).toHaveLength(0);
    expect(run.history).toEqual([]);
    expect(run.status).toBe('created');
    expect(seen.opened).toHaveLength(1);
    // Started again, it trains from version 0 with fresh weights.
    run.start();
    scheduler.flush();
    expect(seen.opened.map((o) => o.message.version)).toEqual([0, 0]);
    expect(run.params.every((p) => p === Math.fround(DEFAULT_RUN_CONFIG.seed / 1000))).toBe(true);
  });

  it('a non-finite evaluation is reported and not recorded; the round still counts', async () => {
    const { run, scheduler, model, seen } = started([A], { patch: { evalEvery: 1 } });
    run.acceptGradient(A, submission(run, A));
    model.evaluations[0]!.resolve({ loss: Number.NaN, accuracy: 0.1 });
    await Promise.resolve();
    await Promise.resolve();
    expect(seen.closed.map((m) => [m.version, m.testLoss])).toEqual([[0, null]]);
    expect(String(seen.errors[0])).toMatch(/run r: the evaluation of version 1 is not finite/);
    scheduler.flush();
    expect(run.status).toBe('running');
    expect(seen.opened).toHaveLength(2);
  });
});

describe('Run: faults in scheduled callbacks', () => {
  it(
    'a throw in the deferred round opening pauses that run with its reason; ' + 'another run on the same clock goes on',
    () => {
      const scheduler = new FakeScheduler();
      let failing = true;
      const openRound = () => {
        if (failing) throw new Error('hook exploded');
      };
      const bad = makeRun({ scheduler, hooks: { openRound }, id: 'bad' });
      const good = makeRun({ scheduler, id: 'good' });
      for (const { run } of [bad, good]) {
        run.addMember(A);
        run.setConnected(A, true);
        run.start();
      }
      expect(() => scheduler.flush()).not.toThrow();
      expect(bad.run.status).toBe('paused');
      expect(bad.run.fault).toBe('opening a round failed: hook exploded');
      expect(bad.run.summary().fault).toBe(bad.run.fault);
      expect(bad.run.round).toBeNull();
      expect(bad.seen.errors.map(String)).toEqual(['Error: run bad: opening a round failed: hook exploded']);
      expect(good.run.status).toBe('running');
      good.run.acceptGradient(A, submission(good.run, A));
      expect(good.run.version).toBe(1);
      expect(good.seen.errors).toEqual([]);
      // The teacher resumes once the cause is gone: the fault clears and training goes on.
      failing = false;
      bad.run.resume();
      expect(bad.run.fault).toBeNull();
      scheduler.flush();
      bad.run.acceptGradient(A, submission(bad.run, A));
      expect(bad.run.version).toBe(1);
    },
  );

  it('a throw while closing at the deadline drops the round, keeps the weights, and pauses the run', () => {
    const explode = () => {
      throw new Error('step exploded');
    };
    const { run, scheduler, seen } = started([A, B], {
      patch: { quorum: { fraction: 0.5, minimum: 1 } },
      combine: explode,
    });
    const before = run.params.slice();
    run.acceptGradient(A, submission(run, A));
    // The update fails inside the deadline timer's callback: nothing reaches the timer.
    expect(() => scheduler.advance(1000)).not.toThrow();
    expect(run.status).toBe('paused');
    expect(run.fault).toBe('closing round 0 failed: step exploded');
    expect(run.version).toBe(0);
    expect(run.round).toBeNull();
    expect(run.params).toEqual(before);
    expect(seen.closed).toHaveLength(0);
    expect(seen.errors.map(String)).toEqual(['Error: run r: closing round 0 failed: step exploded']);
    // No round opens on a paused run, however long the clock runs.
    scheduler.advance(10_000);
    expect(seen.opened).toHaveLength(1);
  });

  it('an update whose momentum would overflow float32 is discarded, never applied', () => {
    const { run, scheduler, seen } = started([A], { patch: { learningRate: 0.1, momentum: 0.9 } });
    // Round 0: v = 3e38, finite. Round 1: v = 0.9 · 3e38 + 3e38 > float32's 3.4e38.
    run.acceptGradient(A, submission(run, A, 3e38));
    expect(run.version).toBe(1);
    const after0 = run.params.slice();
    scheduler.flush();
    run.acceptGradient(A, submission(run, A, 3e38));
    expect(run.version).toBe(1);
    expect(run.status).toBe('paused');
    expect(run.fault).toMatch(
      /^closing round 1 failed: the momentum overflows at parameter 0; the update was discarded$/,
    );
    expect(run.params).toEqual(after0);
    expect(run.snapshot().velocity.every(Number.isFinite)).toBe(true);
    expect(seen.closed).toHaveLength(1);
  });

  it('a throw while publishing an evaluated round pauses the run', async () => {
    const roundClosed = () => {
      throw new Error('publish exploded');
    };
    const { run, model, seen } = started([A], { patch: { evalEvery: 1 }, hooks: { roundClosed } });
    run.acceptGradient(A, submission(run, A));
    model.evaluations[0]!.resolve({ loss: 0.5, accuracy: 0.5 });
    await Promise.resolve();
    await Promise.resolve();
    expect(run.status).toBe('paused');
    expect(run.fault).toBe('publishing an evaluated round failed: publish exploded');
    expect(seen.errors.map(String)).toEqual(['Error: run r: publishing an evaluated round failed: publish exploded']);
  });
});
