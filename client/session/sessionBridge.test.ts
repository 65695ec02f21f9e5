import { describe, expect, it } from 'vitest';
import { asRunId, asWorkerId } from '../../core/protocol';
import { DEFAULT_RUN_CONFIG } from '../../core/schema';
import { createWorkerStore } from '../ui/store/workerStore';
import { applySinkCall, FLUSH_MS, frameBatcher, MODEL_POST_MS, postingSink } from './sessionBridge';
import type { FromSessionWorker, SinkCall } from './sessionMessages';

/** A hand-cranked clock: timers and animation frames run only when the test says so. */
function manualClock() {
  let now = 0;
  let timers: { at: number; run: () => void }[] = [];
  let frames: (() => void)[] = [];
  return {
    now: () => now,
    setTimeout: (run: () => void, ms: number) => {
      timers.push({ at: now + ms, run });
    },
    requestAnimationFrame: (run: () => void) => {
      frames.push(run);
    },
    /** Moves time on, running every timer that falls due (in order). */
    advance(ms: number) {
      const until = now + ms;
      for (;;) {
        const due = timers.filter((t) => t.at <= until).sort((a, b) => a.at - b.at)[0];
        if (due === undefined) break;
        timers = timers.filter((t) => t !== due);
        now = due.at;
        due.run();
      }
      now = until;
    },
    frame() {
      const run = frames;
      frames = [];
      for (const f of run) f();
    },
  };
}

const point = (round: number) => ({
  round,
  loss: 1 / (round + 1),
  bytes: 100,
  denseBytes: 4000,
  closedRel: 0.5,
  realisedRel: 0.4,
  computeMs: 5,
  compressMs: 2,
  uploadMs: 1,
});

/** The replica's status as the session reports it (a relayed round whose hash matched). */
const downlinkView = {
  mode: 'auto',
  delivery: 'relay',
  version: 7,
  hash: 'ab12',
  bytes: 25_000,
  verified: 6,
  resyncs: 1,
  closedRel: null,
  choice: {
    version: 6,
    downlink: { update: 3, sync: 1, full: 0 },
    choice: { relayBytes: 25_000, messages: 4, modelBytes: 407_128 },
  },
} as const;

describe('postingSink (in the worker)', () => {
  it(
    'sends the writes of a task as one message, at most one message per FLUSH_MS, ' +
      'in order, as plain data the page can apply',
    () => {
      const clock = manualClock();
      const posted: FromSessionWorker[] = [];
      const sink = postingSink((message) => posted.push(structuredClone(message)), clock);
      const assignment = { workerId: asWorkerId(3), runId: asRunId('r1'), config: DEFAULT_RUN_CONFIG, shard: 2 };
      sink.setPhase('joining');
      sink.assigned(assignment);
      sink.roundSent(point(0));
      sink.setDigits([{ pixels: new Uint8Array(784).fill(7), label: 4, prediction: 4 }]);
      sink.setDownlink(downlinkView);
      expect(posted).toEqual([]);
      clock.advance(0);
      expect(posted).toHaveLength(1);
      sink.roundSent(point(1));
      // The page has a message of this quarter second already: the next waits for the next quarter.
      clock.advance(FLUSH_MS - 1);
      expect(posted).toHaveLength(1);
      clock.advance(1);
      expect(posted).toHaveLength(2);

      // Applied on a store, the messages give what direct calls give.
      const viaMessages = createWorkerStore();
      for (const message of posted)
        if (message.type === 'sink') for (const call of message.calls) applySinkCall(viaMessages.getState(), call);
      const direct = createWorkerStore();
      direct.getState().setPhase('joining');
      direct.getState().assigned(assignment);
      direct.getState().roundSent(point(0));
      direct.getState().setDigits([{ pixels: new Uint8Array(784).fill(7), label: 4, prediction: 4 }]);
      direct.getState().setDownlink!(downlinkView);
      direct.getState().roundSent(point(1));
      const { phase, workerId, runId, shard, roundsSent, history, digits, downlink } = viaMessages.getState();
      expect(downlink).toEqual(downlinkView);
      expect({ phase, workerId, runId, shard, roundsSent, history, digits, downlink }).toEqual({
        phase: direct.getState().phase,
        workerId: direct.getState().workerId,
        runId: direct.getState().runId,
        shard: direct.getState().shard,
        roundsSent: direct.getState().roundsSent,
        history: direct.getState().history,
        digits: direct.getState().digits,
        downlink: direct.getState().downlink,
      });
      expect(roundsSent).toBe(2);
    },
  );

  it('sends the model at most once a second, the newest one, with its buffer transferred', () => {
    const clock = manualClock();
    const posted: { message: FromSessionWorker; transfer: Transferable[] }[] = [];
    const sink = postingSink((message, transfer) => posted.push({ message, transfer }), clock);
    const model = (version: number) => ({ kind: 'mlp' as const, weights: new Float32Array(10).fill(version), version });
    const models = () =>
      posted.flatMap(({ message, transfer }) =>
        message.type === 'sink'
          ? message.calls
              .filter((c): c is Extract<SinkCall, { action: 'setModel' }> => c.action === 'setModel')
              .map((c) => ({ c, transfer }))
          : [],
      );
    sink.setModel(model(1));
    clock.advance(0);
    expect(models().map(({ c }) => c.arg.version)).toEqual([1]);
    expect(models()[0]!.transfer).toEqual([models()[0]!.c.arg.weights.buffer]);
    // Three more rounds within the second: only the last goes, once the second is over.
    for (const v of [2, 3, 4]) {
      clock.advance(200);
      sink.setModel(model(v));
    }
    clock.advance(MODEL_POST_MS - 601);
    expect(models()).toHaveLength(1);
    clock.advance(1);
    expect(models().map(({ c }) => c.arg.version)).toEqual([1, 4]);
    expect(models()[1]!.c.arg.weights[0]).toBe(4);
  });
});

describe('frameBatcher (on the page)', () => {
  it('applies queued writes together at an animation frame, at most every FLUSH_MS', () => {
    const clock = manualClock();
    const applied: number[] = [];
    const batch = frameBatcher((calls) => applied.push(calls.length), clock);
    const phase: SinkCall = { action: 'setPhase', arg: 'computing' };
    batch.push([phase, phase]);
    batch.push([phase]);
    expect(applied).toEqual([]);
    clock.frame();
    expect(applied).toEqual([3]);
    // Right after a flush, the next writes wait out FLUSH_MS before asking for a frame.
    batch.push([phase]);
    clock.frame();
    expect(applied).toEqual([3]);
    clock.advance(FLUSH_MS);
    clock.frame();
    expect(applied).toEqual([3, 1]);
  });

  it('applies them by a timer when no frame comes (a hidden tab)', () => {
    const clock = manualClock();
    const applied: number[] = [];
    const batch = frameBatcher((calls) => applied.push(calls.length), clock);
    batch.push([{ action: 'setNotice', arg: null }]);
    clock.advance(99);
    expect(applied).toEqual([]);
    clock.advance(1);
    expect(applied).toEqual([1]);
    // The frame that comes late finds nothing left to apply.
    clock.frame();
    expect(applied).toEqual([1]);
  });
});
