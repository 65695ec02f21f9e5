/**
 * Host of shaders/bernoulli.wgsl: tᵢ ~ Bernoulli(pᵢ) for every atom
 * of a layer, drawn from the stream (seed, worker, round, layer) exactly as
 * core/rng/stream.ts draws them, then compacted (compact.ts) so only the kept
 * atoms, and for entry-wise ATOMO their λᵢ / pᵢ, are read back.
 *
 * Threshold decision. The kernel takes the probabilities as f32 (the form
 * they have on the GPU, and the one λᵢ / pᵢ needs) and derives the integer
 * threshold round(p · 2²⁴) from the f32 bit pattern with integer operations
 * (common/random_stream.wgsl). That equals core/rng's bernoulliThreshold(p) for
 * every f32 value p, ties and subnormals included, on any device. What is
 * sampled is the f32 p: to reproduce a GPU draw on the CPU, call
 * bernoulli(bits, Math.fround(p)) — a float64 p that is not an f32 value may,
 * rarely, round to a threshold one apart.
 */
import bernoulliWgsl from '../../../shaders/bernoulli.wgsl?raw';
import type { StreamId } from '../../../core/rng';
import { dispatchOf, encodePass, gridForItems, requireBytes } from '../runtime/dispatch';
import { PipelineCache, type Kernel } from '../runtime/pipelines';
import { BufferPool, BufferSource, StagingPool } from '../runtime/pools';
import { withGrid, withRandomStream } from './common';
import { CompactKernel, type Compacted, type Compaction } from './compact';

/** Options of a sampling job. */
export interface BernoulliJobOptions {
  /** Also hold the values λᵢ / pᵢ (entry-wise ATOMO) for encodeGather. */
  readonly values?: boolean;
  /** Take the buffers from this pool (and give them back on destroy). */
  readonly pool?: BufferPool;
}

/** The GPU buffers of one draw (one layer), for up to `capacity` atoms. */
export class BernoulliJob {
  /** Most atoms a draw may have. */
  readonly capacity: number;
  /** ⌈capacity/32⌉ × u32: atom 32w + b kept iff bit b of word w is set. */
  readonly keepMask: GPUBuffer;
  /** Uniform: stream (seed, worker, round, layer) and n, 5 × u32 padded to 32 bytes. */
  readonly params: GPUBuffer;
  /** The kept indices (ascending), their count and values. */
  readonly compaction: Compaction;
  /** Atoms of the last encode. */
  n = 0;
  readonly #source: BufferSource;

  /** Allocates the buffers; see BernoulliKernel.createJob. */
  constructor(device: GPUDevice, compact: CompactKernel, capacity: number, options: BernoulliJobOptions = {}) {
    this.capacity = capacity;
    this.#source = new BufferSource(device, options.pool);
    this.keepMask = this.#source.take(
      Math.ceil(capacity / 32) * 4,
      GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC,
      'Bernoulli.keepMask',
    );
    this.params = this.#source.take(8 * 4, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST, 'Bernoulli.params');
    this.compaction = compact.createJob(capacity, {
      values: options.values === true,
      label: 'Bernoulli.compact',
      ...(options.pool === undefined ? {} : { pool: options.pool }),
    });
  }

  /** Gives the buffers back to the pool, or destroys them. */
  destroy(): void {
    this.#source.giveBack();
    this.compaction.destroy();
  }
}

/** What the convenience API returns. */
export interface BernoulliSample extends Compacted {
  /** The keep mask, ⌈n/32⌉ words (layout as BernoulliJob.keepMask). */
  readonly keepMask: Uint32Array;
}

/** Bernoulli keep masks from Philox streams, with compaction of the kept atoms. */
export class BernoulliKernel {
  readonly #device: GPUDevice;
  readonly #kernel: Kernel;
  readonly #compact: CompactKernel;
  readonly #pool: BufferPool;
  readonly #staging: StagingPool;

  /** Takes the pipelines from the device's cache; the pools serve the convenience API. */
  constructor(device: GPUDevice) {
    this.#device = device;
    this.#kernel = PipelineCache.for(device).kernel({
      label: 'Bernoulli',
      code: withGrid(withRandomStream(bernoulliWgsl)),
    });
    this.#compact = new CompactKernel(device);
    this.#pool = new BufferPool(device, 'Bernoulli.pool');
    this.#staging = new StagingPool(device, 'Bernoulli.staging');
  }

  /** Buffers for draws of up to `capacity` atoms; reuse it every round. */
  createJob(capacity: number, options: BernoulliJobOptions = {}): BernoulliJob {
    return new BernoulliJob(this.#device, this.#compact, capacity, options);
  }

  /**
   * Records the draw of n atoms with probabilities `probabilities` (n × f32)
   * from `stream`: the keep mask, then the compaction of the kept indices.
   * Writes the job's uniforms now: one encode per job per submit.
   */
  encode(encoder: GPUCommandEncoder, job: BernoulliJob, stream: StreamId, probabilities: GPUBuffer, n: number): void {
    if (!Number.isInteger(n) || n < 0 || n > job.capacity) {
      throw new RangeError(`Bernoulli: n = ${n} outside the job's capacity ${job.capacity}`);
    }
    requireBytes(probabilities, n * 4, 'Bernoulli: probabilities');
    job.n = n;
    const params = new Uint32Array([stream.seed, stream.worker, stream.round, stream.layer, n, 0, 0, 0]);
    this.#device.queue.writeBuffer(job.params, 0, params);
    const groups = gridForItems(this.#device, this.#kernel, Math.ceil(n / 32)); // one invocation per 32-atom mask word
    encodePass(encoder, 'Bernoulli.pass', [
      dispatchOf(this.#device, this.#kernel, 'Bernoulli', [job.params, probabilities, job.keepMask], groups),
    ]);
    this.#compact.encode(encoder, job.keepMask, n, job.compaction);
  }

  /** Records λᵢ / pᵢ for the kept atoms into job.compaction.values (after encode). */
  encodeGather(encoder: GPUCommandEncoder, job: BernoulliJob, coefficients: GPUBuffer, probabilities: GPUBuffer): void {
    this.#compact.encodeGather(encoder, job.compaction, coefficients, probabilities);
  }

  /** Reads the kept indices (and values) of a submitted job; `expected` as in CompactKernel.read. */
  read(job: BernoulliJob, expected?: number): Promise<Compacted> {
    return this.#compact.read(job.compaction, this.#staging, expected);
  }

  /**
   * Convenience: uploads p (and λ), draws, gathers, and reads back the mask,
   * the kept indices and, with coefficients, λᵢ / pᵢ. Pooled buffers; the
   * read-back is sized by Σ pᵢ + 8 standard deviations, so one round trip.
   */
  async sample(stream: StreamId, probabilities: Float32Array, coefficients?: Float32Array): Promise<BernoulliSample> {
    const n = probabilities.length;
    if (coefficients !== undefined && coefficients.length !== n) {
      throw new RangeError(`Bernoulli: ${coefficients.length} coefficients for ${n} probabilities`);
    }
    const source = new BufferSource(this.#device, this.#pool);
    const upload = (data: Float32Array, name: string) => {
      const buffer = source.take(data.byteLength, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST, name);
      if (data.length > 0) this.#device.queue.writeBuffer(buffer, 0, data.buffer, data.byteOffset, data.byteLength);
      return buffer;
    };
    const job = this.createJob(n, { values: coefficients !== undefined, pool: this.#pool });
    try {
      const pBuffer = upload(probabilities, 'Bernoulli.probabilities');
      const encoder = this.#device.createCommandEncoder({ label: 'Bernoulli.sample' });
      this.encode(encoder, job, stream, pBuffer, n);
      if (coefficients !== undefined)
        this.encodeGather(encoder, job, upload(coefficients, 'Bernoulli.coefficients'), pBuffer);
      const maskRead = this.#staging.encodeRead(encoder, job.keepMask, 0, Math.ceil(n / 32) * 4);
      this.#device.queue.submit([encoder.finish()]);
      const [mask, compacted] = await Promise.all([maskRead.map(), this.read(job, expectedKept(probabilities))]);
      return { keepMask: new Uint32Array(mask), ...compacted };
    } finally {
      job.destroy();
      source.giveBack();
    }
  }

  /** Destroys the pipelines' pooled buffers. */
  destroy(): void {
    this.#pool.destroy();
    this.#staging.destroy();
  }
}

/**
 * A count of kept atoms that a draw exceeds with negligible probability:
 * Σ pᵢ + 8·√(Σ pᵢ(1 − pᵢ)) + 16 (a Chernoff-style margin; exceeding it only
 * costs a second read-back, never a wrong answer).
 */
export function expectedKept(probabilities: Float32Array): number {
  let mean = 0;
  let variance = 0;
  for (const p of probabilities) {
    const q = Math.min(1, Math.max(0, p)) || 0;
    mean += q;
    variance += q * (1 - q);
  }
  return Math.ceil(mean + 8 * Math.sqrt(variance) + 16);
}
