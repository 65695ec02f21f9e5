/**
 * Timing of GPU work. With `timestamp-query` the time comes from the GPU:
 * an empty marker pass writes a timestamp before the recorded work and another
 * writes one after it. Without it, wall time from submit to
 * `onSubmittedWorkDone`, which also counts submission and driver overhead.
 * Chrome quantises timestamps to 100 µs; nodeDevice.ts turns that off in Dawn.
 */
import type { GpuContext } from './device';
import { StagingPool } from './pools';

/** One measurement. */
export interface GpuTiming {
  /** Duration in milliseconds, from `source`. */
  readonly ms: number;
  /** `timestamp`: GPU timestamps around the work; `wall`: submit to onSubmittedWorkDone. */
  readonly source: 'timestamp' | 'wall';
  /** Wall time from submit to onSubmittedWorkDone in milliseconds, always measured. */
  readonly wallMs: number;
}

/** Times recorded GPU work; one measurement at a time per timer. */
export class GpuTimer {
  readonly #device: GPUDevice;
  readonly #querySet: GPUQuerySet | null;
  readonly #resolve: GPUBuffer | null;
  readonly #staging: StagingPool;
  #busy = false;

  /** Uses timestamps when `ctx.features.timestampQuery`, else wall time. */
  constructor(ctx: Pick<GpuContext, 'device' | 'features'>, label = 'Timer') {
    this.#device = ctx.device;
    this.#staging = new StagingPool(ctx.device, `${label}.staging`);
    if (ctx.features.timestampQuery) {
      this.#querySet = ctx.device.createQuerySet({ label: `${label}.querySet`, type: 'timestamp', count: 2 });
      this.#resolve = ctx.device.createBuffer({
        label: `${label}.resolve`,
        size: 2 * 8, // 2 × u64 timestamps in nanoseconds
        usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC,
      });
    } else {
      this.#querySet = null;
      this.#resolve = null;
    }
  }

  /** Whether measurements come from GPU timestamps. */
  get usesTimestamps(): boolean {
    return this.#querySet !== null;
  }

  /**
   * Waits for earlier work, records `record` into a fresh encoder between the
   * two markers, submits it and returns how long it took. Put many
   * repetitions in one call: per-submit overhead then averages out.
   */
  async measure(record: (encoder: GPUCommandEncoder) => void): Promise<GpuTiming> {
    if (this.#busy) throw new Error('GpuTimer.measure: one measurement at a time');
    this.#busy = true;
    try {
      await this.#device.queue.onSubmittedWorkDone();
      const encoder = this.#device.createCommandEncoder({ label: 'Timer.encoder' });
      if (this.#querySet !== null) {
        encoder
          .beginComputePass({
            label: 'Timer.begin',
            timestampWrites: { querySet: this.#querySet, beginningOfPassWriteIndex: 0 },
          })
          .end();
      }
      record(encoder);
      let pending = null;
      if (this.#querySet !== null && this.#resolve !== null) {
        encoder
          .beginComputePass({
            label: 'Timer.end',
            timestampWrites: { querySet: this.#querySet, endOfPassWriteIndex: 1 },
          })
          .end();
        encoder.resolveQuerySet(this.#querySet, 0, 2, this.#resolve, 0);
        pending = this.#staging.encodeRead(encoder, this.#resolve, 0, 16);
      }
      const start = performance.now();
      this.#device.queue.submit([encoder.finish()]);
      await this.#device.queue.onSubmittedWorkDone();
      const wallMs = performance.now() - start;
      if (pending === null) return { ms: wallMs, source: 'wall', wallMs };
      const [begin, end] = new BigUint64Array(await pending.map());
      // A device may report 0 or out-of-order stamps (spec allows it): fall back to wall time.
      if (begin === undefined || end === undefined || begin === 0n || end <= begin) {
        return { ms: wallMs, source: 'wall', wallMs };
      }
      return { ms: Number(end - begin) / 1e6, source: 'timestamp', wallMs };
    } finally {
      this.#busy = false;
    }
  }

  /** Destroys the query set and buffers. */
  destroy(): void {
    this.#querySet?.destroy();
    this.#resolve?.destroy();
    this.#staging.destroy();
  }
}
