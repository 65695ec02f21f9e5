/**
 * The round state machine of server/run/machine.ts on a hand-driven clock: a
 * reset while the held-out evaluation is in flight, and a fault inside a
 * scheduled callback (that run pauses with its reason; another run on the
 * same clock goes on). The harness is server/testing/runHarness.ts.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_RUN_CONFIG } from '../../core/schema';
import { FakeScheduler } from '../testing/fakeScheduler';
import { A, B, makeRun, started, submission } from '../testing/runHarness';

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
