/**
 * A worker round's clock in Node (core/training/workerRound.ts StepClock):
 * the calling thread's own CPU time, so that a round's compute, compression
 * and encoding times are the scheme's cost, not the machine's load (a
 * thread waiting for a core adds wall time, not CPU time). Node 20 has no
 * per-thread CPU clock; on Linux the first field of
 * /proc/thread-self/schedstat is the thread's time on a CPU in nanoseconds.
 * The kernel advances it at its scheduler ticks and context switches, so
 * one reading lags by up to a tick (4 ms at 250 Hz): a single short step
 * may read 0 or a tick, but the mean over rounds is the step's CPU time
 * (docs/protocol.md, "Worker times"). A read costs about 25 µs of wall time.
 * Where the file cannot be read (not Linux), the clock is the wall clock and
 * says so.
 */
import { readFileSync } from 'node:fs';
import { WALL_CLOCK, type StepClock } from '../../core/training/workerRound';

const SCHEDSTAT = '/proc/thread-self/schedstat';

/** The calling thread's CPU time in ms from a schedstat file, or null when it cannot be read. */
export function readThreadCpuMs(path = SCHEDSTAT): number | null {
  try {
    const ns = Number(readFileSync(path, 'utf8').split(' ', 1)[0]);
    return Number.isFinite(ns) && ns >= 0 ? ns / 1e6 : null;
  } catch {
    return null;
  }
}

/** The thread CPU clock where `path` reads (each thread reads its own), else WALL_CLOCK. */
export function threadCpuClock(path = SCHEDSTAT): StepClock {
  if (readThreadCpuMs(path) === null) return WALL_CLOCK;
  return { now: () => readThreadCpuMs(path) ?? Number.NaN, source: 'thread-cpu' };
}
