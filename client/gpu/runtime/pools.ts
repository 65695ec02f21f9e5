/**
 * Buffer pools: kernels and read-backs reuse GPU buffers instead of creating
 * and destroying them per step. Creating a MAP_READ buffer per read costs an
 * allocation and a driver round trip each time; the pools keep them.
 *
 * Reuse rule (the queue runs commands in submission order): release a buffer
 * only after submitting the work that uses it, and only when nothing submitted
 * later still needs its contents. `queue.writeBuffer` runs at call time, ahead
 * of command buffers not yet submitted, hence "after submitting".
 */

/** Smallest size class in bytes: tiny uniforms and counters share one class. */
const MIN_CLASS_BYTES = 256;

/** Up to this size classes are powers of two; above it, quarter steps of an octave. */
const POWER_OF_TWO_LIMIT = 64 * 1024;

/**
 * The size class of a request of `bytes`: the next power of two (at least
 * 256 B) up to 64 KiB; above, the next multiple of a quarter of the octave
 * (2ᵏ · 5/4, 6/4, 7/4, 8/4), so a big layer wastes at most 25% instead of
 * 100%. A class above `maxBufferSize` gives the exact size (to 4 bytes).
 */
export function sizeClass(bytes: number, maxBufferSize = Number.MAX_SAFE_INTEGER): number {
  if (!Number.isFinite(bytes) || bytes < 0) throw new RangeError(`buffer size ${bytes} is not a byte count`);
  let size = MIN_CLASS_BYTES;
  if (bytes <= POWER_OF_TWO_LIMIT) {
    while (size < bytes) size *= 2;
  } else {
    const step = 2 ** (Math.floor(Math.log2(bytes)) - 2);
    size = Math.ceil(bytes / step) * step;
  }
  return size <= maxBufferSize ? size : Math.ceil(bytes / 4) * 4;
}

/** Counters that show whether the pool actually reuses. */
export interface PoolStats {
  /** Buffers created since the pool was made. */
  readonly created: number;
  /** Acquisitions served by a released buffer. */
  readonly reused: number;
  /** Buffers acquired and not yet released. */
  readonly inUse: number;
  /** Released buffers waiting for reuse. */
  readonly free: number;
  /** Bytes held, in use and free. */
  readonly bytes: number;
}

/** A pool of GPU buffers keyed by (size class, usage flags). */
export class BufferPool {
  readonly #device: GPUDevice;
  readonly #label: string;
  readonly #free = new Map<string, GPUBuffer[]>();
  readonly #inUse = new Set<GPUBuffer>();
  #created = 0;
  #reused = 0;
  #bytes = 0;

  /** `label` prefixes the labels of the buffers it creates ('Pool' → 'Pool.Bernoulli.keepMask'). */
  constructor(device: GPUDevice, label = 'BufferPool') {
    this.#device = device;
    this.#label = label;
  }

  /**
   * A buffer of at least `bytes` bytes with exactly `usage`, labelled
   * `<pool>.<label>`. Its size is the size class, so bind with an explicit
   * size where a kernel reads the array length.
   */
  acquire(bytes: number, usage: GPUBufferUsageFlags, label: string): GPUBuffer {
    const size = sizeClass(bytes, this.#device.limits.maxBufferSize);
    const key = `${size}:${usage}`;
    const buffer = this.#free.get(key)?.pop();
    const fullLabel = `${this.#label}.${label}`;
    if (buffer !== undefined) {
      this.#reused++;
      buffer.label = fullLabel;
      this.#inUse.add(buffer);
      return buffer;
    }
    const created = this.#device.createBuffer({ label: fullLabel, size, usage });
    this.#created++;
    this.#bytes += size;
    this.#inUse.add(created);
    return created;
  }

  /** Gives a buffer back for reuse (see the reuse rule at the top of this file). */
  release(buffer: GPUBuffer): void {
    if (!this.#inUse.delete(buffer)) {
      throw new Error(`${buffer.label}: released twice, or not acquired from pool ${this.#label}`);
    }
    const key = `${buffer.size}:${buffer.usage}`;
    const list = this.#free.get(key);
    if (list === undefined) this.#free.set(key, [buffer]);
    else list.push(buffer);
  }

  /** Destroys the free buffers (memory back to the driver); buffers in use stay valid. */
  trim(): void {
    for (const list of this.#free.values()) {
      for (const buffer of list) {
        this.#bytes -= buffer.size;
        buffer.destroy();
      }
    }
    this.#free.clear();
  }

  /** Destroys every buffer of the pool, in use or not. */
  destroy(): void {
    this.trim();
    for (const buffer of this.#inUse) {
      this.#bytes -= buffer.size;
      buffer.destroy();
    }
    this.#inUse.clear();
  }

  /** Current counters. */
  get stats(): PoolStats {
    let free = 0;
    for (const list of this.#free.values()) free += list.length;
    return { created: this.#created, reused: this.#reused, inUse: this.#inUse.size, free, bytes: this.#bytes };
  }
}

/** Where a job's buffers come from: a pool (given back on destroy) or the device (destroyed). */
export class BufferSource {
  readonly #device: GPUDevice;
  readonly #pool: BufferPool | undefined;
  readonly #held: GPUBuffer[] = [];

  /** Buffers from `pool` when given, else created on `device`. */
  constructor(device: GPUDevice, pool?: BufferPool) {
    this.#device = device;
    this.#pool = pool;
  }

  /** A buffer of at least `bytes` bytes (at least 4: WebGPU binds no empty buffer). */
  take(bytes: number, usage: GPUBufferUsageFlags, label: string): GPUBuffer {
    const size = Math.max(4, Math.ceil(bytes / 4) * 4);
    const buffer = this.#pool?.acquire(size, usage, label) ?? this.#device.createBuffer({ label, size, usage });
    this.#held.push(buffer);
    return buffer;
  }

  /** Gives every buffer back to the pool, or destroys it. */
  giveBack(): void {
    for (const buffer of this.#held) {
      if (this.#pool === undefined) buffer.destroy();
      else this.#pool.release(buffer);
    }
    this.#held.length = 0;
  }
}

/** A copy recorded into an encoder, to be mapped once that encoder is submitted. */
export interface PendingRead {
  /** Bytes the read will return. */
  readonly bytes: number;
  /** Waits for the GPU, returns a copy of the bytes and gives the staging buffer back. Call once. */
  map(): Promise<ArrayBuffer>;
}

/** A pool of MAP_READ staging buffers for GPU → CPU read-backs. */
export class StagingPool {
  readonly #device: GPUDevice;
  readonly #pool: BufferPool;

  /** Staging buffers are labelled `<label>.<source label>`. */
  constructor(device: GPUDevice, label = 'Staging') {
    this.#device = device;
    this.#pool = new BufferPool(device, label);
  }

  /**
   * Records a copy of `bytes` bytes (a multiple of 4) of `source` from
   * `offset` into a pooled staging buffer; map the result after submitting
   * `encoder`. Several reads can share one submit and be mapped together.
   */
  encodeRead(encoder: GPUCommandEncoder, source: GPUBuffer, offset: number, bytes: number): PendingRead {
    if (bytes % 4 !== 0 || offset % 4 !== 0) {
      throw new RangeError(`${source.label}: read-back offset ${offset} and size ${bytes} must be multiples of 4`);
    }
    if (bytes === 0) return { bytes, map: () => Promise.resolve(new ArrayBuffer(0)) };
    const staging = this.#pool.acquire(bytes, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST, source.label);
    encoder.copyBufferToBuffer(source, offset, staging, 0, bytes);
    let mapped = false;
    return {
      bytes,
      map: async () => {
        if (mapped) throw new Error(`${staging.label}: mapped twice`);
        mapped = true;
        try {
          await staging.mapAsync(GPUMapMode.READ, 0, bytes);
        } catch (error) {
          // A failed map (device lost, validation) leaves the buffer unusable for the pool.
          this.#pool.release(staging);
          this.#pool.trim();
          throw error;
        }
        const copy = staging.getMappedRange(0, bytes).slice(0);
        staging.unmap();
        this.#pool.release(staging);
        return copy;
      },
    };
  }

  /** Reads `bytes` bytes of `source` from `offset`: one submit, one map. */
  async read(source: GPUBuffer, offset: number, bytes: number): Promise<ArrayBuffer> {
    const encoder = this.#device.createCommandEncoder({ label: `${source.label}.readback` });
    const pending = this.encodeRead(encoder, source, offset, bytes);
    this.#device.queue.submit([encoder.finish()]);
    return pending.map();
  }

  /** Counters of the underlying pool. */
  get stats(): PoolStats {
    return this.#pool.stats;
  }

  /** Destroys the staging buffers. */
  destroy(): void {
    this.#pool.destroy();
  }
}
