/** Helpers for benchmark pages: wall-clock medians over repeated batches, progress lines, where the benchmark ran. */

/** Median of a list of numbers. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Milliseconds per call of `runBatch(reps)`, which must do `reps` calls and
 * resolve when they are finished: warm-up once, then pick `reps` so a batch
 * lasts about `targetMs`, and report the median of `samples` batches.
 */
export async function msPerCall(
  runBatch: (reps: number) => Promise<void>,
  targetMs = 300,
  samples = 5,
): Promise<number> {
  await runBatch(1); // the first call may compile pipelines: not timed
  let start = performance.now();
  await runBatch(1);
  const once = Math.max(0.01, performance.now() - start);
  const reps = Math.max(1, Math.min(2000, Math.round(targetMs / once)));
  const times: number[] = [];
  for (let s = 0; s < samples; s++) {
    start = performance.now();
    await runBatch(reps);
    times.push((performance.now() - start) / reps);
  }
  return median(times);
}

/** Appends a line to the page and the console so a slow run shows progress. */
export function log(line: string): void {
  console.log(`[bench] ${line}`);
  const element = document.getElementById('log');
  if (element !== null) element.textContent += `\n${line}`;
}

/** Where a benchmark ran: the GPU adapter and the browser. */
export interface BenchHost {
  readonly adapter: string;
  readonly userAgent: string;
}

/** The adapter's description (or its vendor and architecture) and this browser's user agent. */
export function benchHost(info: GPUAdapterInfo): BenchHost {
  return {
    adapter: info.description || [info.vendor, info.architecture].filter(Boolean).join(' ') || 'unnamed adapter',
    userAgent: navigator.userAgent,
  };
}
