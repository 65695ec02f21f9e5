/**
 * Recording work: a kernel's dispatches bound to their buffers once and
 * recorded as often as needed (the common shape of every `plan(...)` in
 * client/gpu/kernels), and the small pieces every host needs to get there
 * (grids within the device limits, bind groups, uniforms, plan caches).
 * Writing parameters once, at plan time, is what lets several plans share
 * one command encoder.
 */
import type { Kernel } from './pipelines';

/** A place in a GPU buffer; offset in f32 elements. */
export interface BufferSlice {
  readonly buffer: GPUBuffer;
  readonly offset: number;
}

/** One compute dispatch: pipeline, bind group and workgroup grid. */
export interface Dispatch {
  readonly pipeline: GPUComputePipeline;
  readonly bindGroup: GPUBindGroup;
  /** Workgroups along x, y and z (y and z default to 1). */
  readonly groups: readonly [x: number, y?: number, z?: number];
}

/** Anything that records into an open compute pass (a plan, a list of dispatches). */
export interface Recordable {
  record(pass: GPUComputePassEncoder): void;
}

/** Records dispatches, in order, into an open compute pass. */
function recordAll(pass: GPUComputePassEncoder, list: readonly Dispatch[]): void {
  for (const { pipeline, bindGroup, groups } of list) {
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup);
    if (groups[0] > 0) pass.dispatchWorkgroups(...groups);
  }
}

/** Wraps dispatches as a Recordable. */
export function dispatches(...list: readonly Dispatch[]): Recordable {
  return { record: (pass) => recordAll(pass, list) };
}

/** Records dispatches, in order, in a compute pass of their own labelled `label`. */
export function encodePass(encoder: GPUCommandEncoder, label: string, list: readonly Dispatch[]): void {
  const pass = encoder.beginComputePass({ label });
  recordAll(pass, list);
  pass.end();
}

/** A fixed list of dispatches and the buffers (uniforms, scratch) it owns. */
export class DispatchPlan implements Recordable {
  readonly #label: string;
  readonly #dispatches: readonly Dispatch[];
  readonly #owned: readonly GPUBuffer[];

  /** `label` names the compute pass `encode` opens, e.g. 'Matmul.pass'. */
  constructor(label: string, list: readonly Dispatch[], owned: readonly GPUBuffer[]) {
    this.#label = label;
    this.#dispatches = list;
    this.#owned = owned;
  }

  /** Number of dispatches the plan records. */
  get dispatchCount(): number {
    return this.#dispatches.length;
  }

  /** Records the dispatches, in order, into an open compute pass. */
  record(pass: GPUComputePassEncoder): void {
    recordAll(pass, this.#dispatches);
  }

  /** Records the dispatches in a compute pass of their own. */
  encode(encoder: GPUCommandEncoder): void {
    encodePass(encoder, this.#label, this.#dispatches);
  }

  /** Frees the buffers the plan owns; only once no submitted work still uses them. */
  destroy(): void {
    for (const buffer of this.#owned) buffer.destroy();
  }
}

/**
 * A 2-D grid of at least `groups` workgroups within the device's
 * per-dimension limit (x first); the shader skips the few extra. 0 groups
 * give [0, 1]: a dispatch that records nothing.
 */
export function gridFor(device: GPUDevice, groups: number): [number, number, number] {
  const x = Math.min(groups, device.limits.maxComputeWorkgroupsPerDimension);
  return [x, x === 0 ? 1 : Math.ceil(groups / x), 1];
}

/**
 * The grid of a kernel that gives one invocation to each of `count` items: ⌈count / WORKGROUP_SIZE⌉ groups (none
 * for 0 items).
 */
export function gridForItems(device: GPUDevice, kernel: Kernel, count: number): [number, number, number] {
  return gridFor(device, Math.ceil(count / workgroupSize(kernel)));
}

/** The kernel's WORKGROUP_SIZE override (its shader must declare one). */
export function workgroupSize(kernel: Kernel): number {
  const size = kernel.constants.WORKGROUP_SIZE;
  if (size === undefined) throw new Error(`${kernel.label}: the shader declares no override WORKGROUP_SIZE`);
  return size;
}

/** A bind group of `kernel`'s group 0 with `buffers` at bindings 0, 1, …, labelled `<label>.bindGroup`. */
export function bindBuffers(
  device: GPUDevice,
  label: string,
  layout: GPUBindGroupLayout,
  buffers: readonly GPUBuffer[],
): GPUBindGroup {
  return device.createBindGroup({
    label: `${label}.bindGroup`,
    layout,
    entries: buffers.map((buffer, binding) => ({ binding, resource: { buffer } })),
  });
}

/** A dispatch of `kernel` over `buffers` (bindings 0, 1, …) on `groups`. */
export function dispatchOf(
  device: GPUDevice,
  kernel: Kernel,
  label: string,
  buffers: readonly GPUBuffer[],
  groups: readonly [number, number, number],
): Dispatch {
  return {
    pipeline: kernel.pipeline,
    bindGroup: bindBuffers(device, label, kernel.pipeline.getBindGroupLayout(0), buffers),
    groups,
  };
}

/**
 * A buffer of `usage` holding `data` (u32 words, or raw bytes), padded to a
 * multiple of 16 bytes, written at creation and pushed onto `owned` when given.
 */
export function bufferWith(
  device: GPUDevice,
  label: string,
  usage: GPUBufferUsageFlags,
  data: readonly number[] | ArrayBuffer | ArrayBufferView,
  owned?: GPUBuffer[],
): GPUBuffer {
  const bytes =
    data instanceof ArrayBuffer
      ? new Uint8Array(data)
      : ArrayBuffer.isView(data)
        ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
        : new Uint8Array(Uint32Array.from(data).buffer);
  const buffer = device.createBuffer({
    label,
    size: Math.max(16, Math.ceil(bytes.byteLength / 16) * 16),
    usage,
    mappedAtCreation: true,
  });
  new Uint8Array(buffer.getMappedRange()).set(bytes);
  buffer.unmap();
  owned?.push(buffer);
  return buffer;
}

/**
 * A storage buffer holding a job table: one record of u32 words per job (all
 * records as long as the first), the last word stored as f32 bits when
 * `lastWordIsFloat` (a tolerance, a ratio). Kernels that take several
 * matrices of different shapes in one dispatch read their job from it.
 */
export function jobTable(
  device: GPUDevice,
  label: string,
  jobs: readonly (readonly number[])[],
  lastWordIsFloat: boolean,
  owned?: GPUBuffer[],
): GPUBuffer {
  const width = jobs[0]?.length ?? 0;
  const table = new ArrayBuffer(Math.max(4, jobs.length * width * 4));
  const words = new Uint32Array(table);
  const floats = new Float32Array(table);
  jobs.forEach((job, j) =>
    job.forEach((value, w) => {
      if (lastWordIsFloat && w === width - 1) floats[j * width + w] = value;
      else words[j * width + w] = value;
    }),
  );
  return bufferWith(device, label, GPUBufferUsage.STORAGE, table, owned);
}

/** A uniform buffer holding `data` (u32 words, or raw bytes): bufferWith(…, UNIFORM, …). */
export function uniformBuffer(
  device: GPUDevice,
  label: string,
  data: readonly number[] | ArrayBuffer,
  owned?: GPUBuffer[],
): GPUBuffer {
  return bufferWith(device, label, GPUBufferUsage.UNIFORM, data, owned);
}

/** Throws a readable RangeError when `buffer` is smaller than a kernel will read. */
export function requireBytes(buffer: GPUBuffer, bytes: number, what: string): void {
  if (buffer.size < bytes) throw new RangeError(`${what} (${buffer.label}) holds ${buffer.size} bytes, needs ${bytes}`);
}

/**
 * Plans kept by a key built from their arguments, the least recently used
 * dropped past `capacity`. Dropped, not destroyed: work recorded from a plan
 * may not be submitted yet; `destroyAll` frees them at the end. An owner that
 * submits everything it records from a plan before it next asks the cache
 * passes `destroyDropped`: a dropped plan is then used by submitted work
 * alone, which WebGPU finishes before it frees the buffers, so the cache
 * destroys what it drops.
 */
export class PlanCache<P extends { destroy(): void }> {
  readonly #capacity: number;
  readonly #destroyDropped: boolean;
  readonly #plans = new Map<string, P>();
  readonly #ids = new WeakMap<GPUBuffer, number>();
  #nextId = 0;

  constructor(capacity: number, { destroyDropped = false }: { readonly destroyDropped?: boolean } = {}) {
    this.#capacity = capacity;
    this.#destroyDropped = destroyDropped;
  }

  /** A number naming `buffer` in keys (buffers have no identity a string can carry). */
  id(buffer: GPUBuffer): number {
    let id = this.#ids.get(buffer);
    if (id === undefined) {
      id = this.#nextId++;
      this.#ids.set(buffer, id);
    }
    return id;
  }

  /** The plan under `key`, made by `make` when absent. */
  get(key: string, make: () => P): P {
    let plan = this.#plans.get(key);
    if (plan !== undefined) {
      this.#plans.delete(key); // re-insert: Map order is recency order
    } else {
      plan = make();
      const oldest = this.#plans.entries().next();
      if (this.#plans.size >= this.#capacity && oldest.done !== true) {
        const [oldestKey, dropped] = oldest.value;
        this.#plans.delete(oldestKey);
        if (this.#destroyDropped) dropped.destroy();
      }
    }
    this.#plans.set(key, plan);
    return plan;
  }

  /** Destroys every kept plan. */
  destroyAll(): void {
    for (const plan of this.#plans.values()) plan.destroy();
    this.#plans.clear();
  }
}
