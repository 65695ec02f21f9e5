import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WALL_CLOCK } from '../../core/training/workerRound';
import { readThreadCpuMs, threadCpuClock } from './threadClock';

const dir = mkdtempSync(join(tmpdir(), 'atomo-clock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Spins for `ms` of wall time. */
function spin(ms: number): void {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) x += Math.sqrt(x + 1);
}

describe('the thread CPU clock', () => {
  it('reads a schedstat file’s first field as ns, and falls back to the wall clock without one', () => {
    const file = join(dir, 'schedstat');
    writeFileSync(file, '123456789 5000 12\n');
    expect(readThreadCpuMs(file)).toBeCloseTo(123.456789, 9);
    expect(threadCpuClock(file).source).toBe('thread-cpu');
    expect(threadCpuClock(file).now()).toBeCloseTo(123.456789, 9);
    writeFileSync(file, 'garbage');
    expect(readThreadCpuMs(file)).toBeNull();
    expect(readThreadCpuMs(join(dir, 'missing'))).toBeNull();
    expect(threadCpuClock(join(dir, 'missing'))).toBe(WALL_CLOCK);
  });

  it.runIf(process.platform === 'linux')('counts this thread’s CPU time on Linux, cheaply', () => {
    const clock = threadCpuClock();
    expect(clock.source).toBe('thread-cpu');
    // 200 ms of spinning is 200 ms of this thread's CPU time when it has a core; on a shared machine it may have had
    // one only part of the time, never more than the whole: the tick lag (≤ 4 ms at 250 Hz) aside, ≤ 200 ms.
    const c0 = clock.now();
    spin(200);
    const used = clock.now() - c0;
    expect(used).toBeGreaterThan(20);
    expect(used).toBeLessThan(210);
    // A read costs tens of µs: 1000 reads take well under a second even on a loaded machine.
    const t0 = performance.now();
    for (let i = 0; i < 1000; i++) clock.now();
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});
