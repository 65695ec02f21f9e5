/**
 * A hand-driven Scheduler (server/run/runDeps.ts) for unit tests: time moves only when the test says, deferred
 * callbacks run when it flushes them.
 */
import type { Scheduler } from '../run/run';

interface Timer {
  readonly at: number;
  readonly fn: () => void;
  cancelled: boolean;
}

/** Scheduler whose clock, timers and deferred queue the test drives. */
export class FakeScheduler implements Scheduler {
  #time = 0;
  readonly #timers: Timer[] = [];
  #deferred: (() => void)[] = [];

  now(): number {
    return this.#time;
  }

  after(ms: number, fn: () => void): () => void {
    const timer: Timer = { at: this.#time + ms, fn, cancelled: false };
    this.#timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  defer(fn: () => void): void {
    this.#deferred.push(fn);
  }

  /** Timers set and not yet fired nor cancelled. */
  get pendingTimers(): number {
    return this.#timers.filter((t) => !t.cancelled).length;
  }

  /** Deferred callbacks waiting. */
  get pendingDeferred(): number {
    return this.#deferred.length;
  }

  /** Runs deferred callbacks until none is left (those they defer too). */
  flush(): void {
    for (let guard = 0; this.#deferred.length > 0; guard++) {
      if (guard > 10_000) throw new Error('FakeScheduler: deferred callbacks keep deferring');
      const batch = this.#deferred;
      this.#deferred = [];
      for (const fn of batch) fn();
    }
  }

  /** Moves the clock by `ms`, firing due timers in time order (flushing deferred callbacks after each). */
  advance(ms: number): void {
    const end = this.#time + ms;
    this.flush();
    for (;;) {
      const due = this.#timers.filter((t) => !t.cancelled && t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.#time = due.at;
      due.cancelled = true;
      due.fn();
      this.flush();
    }
    this.#time = end;
  }
}
