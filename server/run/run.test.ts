/**
 * The round state machine of server/run/machine.ts on a hand-driven clock:
 * when a round closes (everyone in, or the deadline with the quorum), what
 * happens when its participants leave (abandoned, reopened), the first
 * round after a restart (it waits for the class to return), and snapshots.
 * Evaluation and faults are in machine.test.ts; the harness is
 * server/testing/runHarness.ts.
 */
import { describe, expect, it } from 'vitest';
import { parseSubmission } from '../protocol/validation';
import { FakeScheduler } from '../testing/fakeScheduler';
import { A, B, C, D, makeRun, refusal, started, submission } from '../testing/runHarness';

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
    expect(refusal(() => parseSubmission({ ...timed, times: { ...times, applyMs: 1.5 } }))).toBe('accepted');
    expect(parseSubmission({ ...timed, times: { ...times, applyMs: 1.5 } }).times?.applyMs).toBe(1.5);
    expect(refused({ ...times, applyMs: -0.1 })).toBe('bad-message');
    expect(refused({ ...times, applyMs: 'quick' })).toBe('bad-message');
    expect(refused({ ...times, applyMs: 1.6 })).toBe('bad-message'); // with the other parts, more than computeMs
    expect(refused('fast')).toBe('bad-message');
    run.acceptGradient(A, parseSubmission(timed));
    run.acceptGradient(B, submission(run, B));
    const workers = seen.closed[0]!.workers;
    expect(workers.find((w) => w.workerId === A)).toMatchObject({ computeMs: 2, times });
    expect(workers.find((w) => w.workerId === B)!.times).toBeUndefined();
  });

  it('records what opening the round cost, and the update split into combining and the step', () => {
    const scheduler = new FakeScheduler();
    // Handing round:open to the sockets takes 7 ms on this clock.
    const { run, seen } = started([A, B], { scheduler, hooks: { openRound: () => scheduler.advance(7) } });
    run.acceptGradient(A, submission(run, A));
    run.acceptGradient(B, submission(run, B));
    const durations = seen.closed[0]!.durations;
    expect(durations).toMatchObject({ downlinkMs: 0, combineMs: 0, stepMs: 0, updateMs: 0 });
    expect(durations.emitMs).toBe(7);
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
