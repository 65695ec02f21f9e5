/**
 * A step's own cost on the main thread: its CPU time from the kernel's
 * per-thread schedstat (server/run/threadClock.ts), not the wall clock, so
 * that a core another job holds adds nothing, and not process.cpuUsage,
 * which counts V8's background threads too. The kernel advances a running
 * thread's figure at its scheduler ticks and context switches, so a single
 * short step reads 0 or a tick: the figure is taken over a block of steps in
 * a row long enough to make that error a few per cent. `npm run bench --
 * compress` and the comparison's calibration (scripts/compare/calibration.ts)
 * both time their steps here.
 */
import { readThreadCpuMs } from '../../server/run/threadClock';

/** The middle value (the upper one of an even count). */
export const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * A full collection where Node runs with --expose-gc (the bench requires it, `required`), so that a case starts on an
 * empty young generation and no marking the case before left running; without it, nothing.
 */
export function collect(required = false): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc !== undefined) gc();
  else if (required) throw new Error('this benchmark needs Node run with --expose-gc (npm run bench does that)');
}

/** This thread's CPU time in ms (NaN where the kernel's schedstat cannot be read: not Linux). */
export function threadCpuMs(): number {
  return readThreadCpuMs() ?? Number.NaN;
}

/**
 * The main thread's CPU ms per call of `step`, over every one of `rounds` inputs in a row, repeated to at least
 * `blockMs` (by `estimateMs` per call), after a collection and one untimed call.
 */
export async function threadCpuPerCall(
  rounds: number,
  estimateMs: number,
  step: (round: number) => unknown,
  blockMs = 500,
): Promise<number> {
  const repeats = Math.max(1, Math.ceil(blockMs / (rounds * Math.max(estimateMs, 1e-3))));
  collect();
  await step(0);
  const start = threadCpuMs();
  for (let repeat = 0; repeat < repeats; repeat++) for (let round = 0; round < rounds; round++) await step(round);
  return (threadCpuMs() - start) / (repeats * rounds);
}

/** How a calibration times a step: untimed passes first, then blocks of at least `blockMs`, their median kept. */
export interface BlockTiming {
  readonly warmupPasses: number;
  readonly blocks: number;
  readonly blockMs: number;
}

/**
 * The median over `timing.blocks` blocks of the main thread's CPU ms per call of `step` (threadCpuPerCall), after
 * `timing.warmupPasses` untimed passes over the `rounds` inputs (the JIT optimises, as in a worker's first rounds),
 * whose wall time per call sizes the blocks.
 */
export async function threadCpuMedian(
  rounds: number,
  step: (round: number) => unknown,
  timing: BlockTiming,
): Promise<number> {
  const started = performance.now();
  const passes = Math.max(1, timing.warmupPasses);
  for (let pass = 0; pass < passes; pass++) for (let round = 0; round < rounds; round++) await step(round);
  const estimateMs = (performance.now() - started) / (passes * rounds);
  const blocks: number[] = [];
  for (let block = 0; block < timing.blocks; block++)
    blocks.push(await threadCpuPerCall(rounds, estimateMs, step, timing.blockMs));
  return median(blocks);
}
