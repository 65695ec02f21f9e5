/**
 * Host of shaders/compact/, stream compaction of a bit mask: the indices of
 * the set bits in increasing order and their count, so only the kept atoms
 * of a Bernoulli draw are read back; plus the gathers at those indices:
 * λᵢ / pᵢ (gather.wgsl: entry-wise ATOMO sends (index, value) pairs) and
 * whole rows (gather_rows.wgsl: spectral ATOMO sends uᵢ, vᵢ of the kept atoms).
 *
 * Three passes over blocks of 256 atoms (8 mask words), all deterministic:
 * positions come from prefix sums of counts, never from atomics.
 *   count   one invocation per block: its set bits
 *   offsets one workgroup: exclusive prefix sum of the block counts, the
 *           total, and the gather's dispatch size
 *   scatter one invocation per block: writes its set bits' indices in order
 * Only the offsets pass uses workgroup barriers (a fixed 17), because on
 * SwiftShader every barrier is a coroutine switch of every invocation.
 */
import countWgsl from '../../../shaders/compact/count.wgsl?raw';
import offsetsWgsl from '../../../shaders/compact/offsets.wgsl?raw';
import scatterWgsl from '../../../shaders/compact/scatter.wgsl?raw';
import gatherWgsl from '../../../shaders/compact/gather.wgsl?raw';
import gatherRowsWgsl from '../../../shaders/compact/gather_rows.wgsl?raw';
import maskWgsl from '../../../shaders/compact/mask.wgsl?raw';
import {
  dispatchOf,
  encodePass,
  gridForItems,
  requireBytes,
  uniformBuffer,
  workgroupSize,
  type BufferSlice,
  type Dispatch,
} from '../runtime/dispatch';
import { PipelineCache, kernelFamily, wgslConstant, type Kernel } from '../runtime/pipelines';
import { BufferSource, type BufferPool, type StagingPool } from '../runtime/pools';
import { withGrid } from './common';

/** Atoms per compaction block (BLOCK_ATOMS in compact/mask.wgsl): 8 mask words of 32 bits, one invocation. */
const COMPACT_BLOCK_ATOMS = wgslConstant(maskWgsl, 'BLOCK_ATOMS');
/** Bytes of the summary buffer: count, then the gather's (x, y, z) workgroups. */
const SUMMARY_BYTES = 4 * 4;

/** Options of a compaction job. */
export interface CompactionOptions {
  /** Also hold a `values` buffer for encodeGather. */
  readonly values?: boolean;
  /** Take the buffers from this pool (and give them back on destroy). */
  readonly pool?: BufferPool;
  /** Label prefix of the buffers. */
  readonly label?: string;
}

/** The GPU buffers of one compaction, for masks of up to `capacity` atoms. */
export class Compaction {
  /** Most atoms a mask may have. */
  readonly capacity: number;
  /** u32 per 256-atom block: set bits in the block. */
  readonly blockCounts: GPUBuffer;
  /** u32 per block: kept atoms in all earlier blocks. */
  readonly blockOffsets: GPUBuffer;
  /** 16 bytes: count, then the gather's workgroups (x, y, z); also the indirect-dispatch buffer. */
  readonly summary: GPUBuffer;
  /** capacity × u32: kept indices, ascending, the first `count` valid. */
  readonly indices: GPUBuffer;
  /** capacity × f32: λᵢ / pᵢ of the kept atoms in index order (with `values: true`). */
  readonly values: GPUBuffer | null;
  /** Uniform of count and scatter: n (u32), padded to 16 bytes. */
  readonly maskParams: GPUBuffer;
  /** Uniform of offsets: number of blocks (u32), padded to 16 bytes. */
  readonly offsetsParams: GPUBuffer;
  /** Atoms in the mask of the last encode (bounds the read-back). */
  n = 0;
  readonly #source: BufferSource;

  /** Allocates the buffers; see CompactKernel.createJob. */
  constructor(device: GPUDevice, capacity: number, options: CompactionOptions = {}) {
    const label = options.label ?? 'Compact';
    const blocks = Math.max(1, Math.ceil(capacity / COMPACT_BLOCK_ATOMS));
    const storage = GPUBufferUsage.STORAGE;
    this.capacity = capacity;
    this.#source = new BufferSource(device, options.pool);
    const take = (bytes: number, usage: GPUBufferUsageFlags, name: string) =>
      this.#source.take(bytes, usage, `${label}.${name}`);
    this.blockCounts = take(blocks * 4, storage, 'blockCounts');
    this.blockOffsets = take(blocks * 4, storage, 'blockOffsets');
    this.summary = take(SUMMARY_BYTES, storage | GPUBufferUsage.INDIRECT | GPUBufferUsage.COPY_SRC, 'summary');
    this.indices = take(capacity * 4, storage | GPUBufferUsage.COPY_SRC, 'indices');
    this.values = options.values === true ? take(capacity * 4, storage | GPUBufferUsage.COPY_SRC, 'values') : null;
    const uniform = GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST;
    this.maskParams = take(16, uniform, 'maskParams');
    this.offsetsParams = take(16, uniform, 'offsetsParams');
  }

  /** Gives the buffers back to the pool, or destroys them. */
  destroy(): void {
    this.#source.giveBack();
  }
}

/** What a read-back of a compaction returns. */
export interface Compacted {
  /** Kept indices, ascending. */
  readonly indices: Uint32Array;
  /** λᵢ / pᵢ for each kept index, when the job has values. */
  readonly values: Float32Array | null;
}

/** Stream compaction of bit masks and the gathers at the kept indices. */
export class CompactKernel {
  readonly #device: GPUDevice;
  readonly #kernels: Readonly<Record<'count' | 'scatter' | 'gather' | 'gatherRows' | 'offsets', Kernel>>;

  /** Takes the five pipelines from the device's pipeline cache. */
  constructor(device: GPUDevice) {
    this.#device = device;
    const perItem = kernelFamily(device, 'Compact', {
      count: { code: withGrid(countWgsl, maskWgsl) },
      scatter: { code: withGrid(scatterWgsl, maskWgsl) },
      gather: { code: withGrid(gatherWgsl) },
      gatherRows: { code: withGrid(gatherRowsWgsl) },
    });
    // The offsets pass writes the gather's indirect grid: it is told the gather's workgroup size and the device limit.
    const offsets = PipelineCache.for(device).kernel({
      label: 'Compact.offsets',
      code: offsetsWgsl,
      constants: {
        GATHER_WORKGROUP_SIZE: workgroupSize(perItem.gather),
        MAX_GROUPS_PER_DIMENSION: device.limits.maxComputeWorkgroupsPerDimension,
      },
    });
    this.#kernels = { ...perItem, offsets };
  }

  /** Buffers for masks of up to `capacity` atoms. */
  createJob(capacity: number, options: CompactionOptions = {}): Compaction {
    return new Compaction(this.#device, capacity, options);
  }

  /**
   * Records the compaction of the first `n` bits of `mask` (⌈n/32⌉ u32
   * words, atom 32w + b in bit b of word w) into `job.indices` and
   * `job.summary`. Writes the job's uniforms now: one encode per job per submit.
   */
  encode(encoder: GPUCommandEncoder, mask: GPUBuffer, n: number, job: Compaction): void {
    if (!Number.isInteger(n) || n < 0 || n > job.capacity) {
      throw new RangeError(`Compact: n = ${n} outside the job's capacity ${job.capacity}`);
    }
    requireBytes(mask, Math.ceil(n / 32) * 4, 'Compact: mask');
    job.n = n;
    const blocks = Math.ceil(n / COMPACT_BLOCK_ATOMS);
    this.#device.queue.writeBuffer(job.maskParams, 0, new Uint32Array([n, 0, 0, 0]));
    this.#device.queue.writeBuffer(job.offsetsParams, 0, new Uint32Array([blocks, 0, 0, 0]));
    // One invocation per block in the count and scatter passes (0 groups for n = 0).
    const perBlock = (kernel: Kernel) => gridForItems(this.#device, kernel, blocks);
    const list: Dispatch[] = [
      dispatchOf(
        this.#device,
        this.#kernels.count,
        'Compact.count',
        [job.maskParams, mask, job.blockCounts],
        perBlock(this.#kernels.count),
      ),
      // Always one workgroup, even for n = 0: it writes count = 0 and an empty gather.
      dispatchOf(
        this.#device,
        this.#kernels.offsets,
        'Compact.offsets',
        [job.offsetsParams, job.blockCounts, job.blockOffsets, job.summary],
        [1, 1, 1],
      ),
      dispatchOf(
        this.#device,
        this.#kernels.scatter,
        'Compact.scatter',
        [job.maskParams, mask, job.blockOffsets, job.indices],
        perBlock(this.#kernels.scatter),
      ),
    ];
    encodePass(encoder, 'Compact.pass', list);
  }

  /**
   * Records values[j] = coefficients[i] / probabilities[i] for each kept
   * index i = indices[j], j < count, after `encode` (indirect dispatch: the
   * count never leaves the GPU).
   */
  encodeGather(encoder: GPUCommandEncoder, job: Compaction, coefficients: GPUBuffer, probabilities: GPUBuffer): void {
    if (job.values === null) throw new Error('Compact: this job was created without values');
    requireBytes(coefficients, job.n * 4, 'Compact: coefficients');
    requireBytes(probabilities, job.n * 4, 'Compact: probabilities');
    const { pipeline, bindGroup } = dispatchOf(
      this.#device,
      this.#kernels.gather,
      'Compact.gather',
      [job.summary, job.indices, coefficients, probabilities, job.values],
      [0, 1, 1],
    );
    const pass = encoder.beginComputePass({ label: 'Compact.gather.pass' });
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup);
    pass.dispatchWorkgroupsIndirect(job.summary, 4); // words 1..3 of the summary
    pass.end();
  }

  /**
   * dst[j·rowLength …] = row indices[j] of `src` (rows atom-major from
   * src.offset), for the kept atoms of `job` (at most `capacity` rows): one
   * packed block to read back. The uniform goes into `owned`.
   */
  planGatherRows(
    owned: GPUBuffer[],
    job: Compaction,
    src: BufferSlice,
    dst: GPUBuffer,
    rowLength: number,
    capacity: number,
  ): Dispatch {
    const params = uniformBuffer(
      this.#device,
      'Compact.gatherRows.params',
      [rowLength, src.offset, capacity, 0],
      owned,
    );
    const buffers = [params, job.summary, job.indices, src.buffer, dst];
    return dispatchOf(
      this.#device,
      this.#kernels.gatherRows,
      'Compact.gatherRows',
      buffers,
      gridForItems(this.#device, this.#kernels.gatherRows, capacity * rowLength),
    );
  }

  /**
   * Reads the kept indices (and values) of a submitted job. Reads the count
   * and the first `expected` entries in one round trip, and the rest in a
   * second one only when more were kept: pass the expected count (Σ pᵢ plus
   * a few standard deviations) to avoid both a second trip and reading n.
   */
  async read(job: Compaction, staging: StagingPool, expected: number = job.n): Promise<Compacted> {
    const first = Math.min(job.n, Math.max(0, Math.ceil(expected)));
    const encoder = this.#device.createCommandEncoder({ label: 'Compact.readback' });
    const summaryRead = staging.encodeRead(encoder, job.summary, 0, SUMMARY_BYTES);
    const indexRead = staging.encodeRead(encoder, job.indices, 0, first * 4);
    const valueRead = job.values === null ? null : staging.encodeRead(encoder, job.values, 0, first * 4);
    this.#device.queue.submit([encoder.finish()]);
    const [summary, indexBytes, valueBytes] = await Promise.all([summaryRead.map(), indexRead.map(), valueRead?.map()]);
    const count = new Uint32Array(summary)[0] ?? 0;
    const indices = new Uint32Array(count);
    const values = job.values === null ? null : new Float32Array(count);
    indices.set(new Uint32Array(indexBytes, 0, Math.min(count, first)));
    if (values !== null && valueBytes !== undefined)
      values.set(new Float32Array(valueBytes, 0, Math.min(count, first)));
    if (count > first) {
      const rest = this.#device.createCommandEncoder({ label: 'Compact.readbackRest' });
      const bytes = (count - first) * 4;
      const moreIndices = staging.encodeRead(rest, job.indices, first * 4, bytes);
      const moreValues = job.values === null ? null : staging.encodeRead(rest, job.values, first * 4, bytes);
      this.#device.queue.submit([rest.finish()]);
      const [i, v] = await Promise.all([moreIndices.map(), moreValues?.map()]);
      indices.set(new Uint32Array(i), first);
      if (values !== null && v !== undefined) values.set(new Float32Array(v), first);
    }
    return { indices, values };
  }
}
