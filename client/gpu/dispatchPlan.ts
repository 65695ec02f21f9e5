/**
 * A kernel's work bound to its buffers once and recorded as often as needed:
 * the common shape of every `plan(...)` in client/gpu. Writing parameters
 * once, at plan time, is what lets several plans share one command encoder.
 */

/** One compute dispatch: pipeline, bind group and workgroup grid. */
export interface Dispatch {
  readonly pipeline: GPUComputePipeline;
  readonly bindGroup: GPUBindGroup;
  /** Workgroups along x, y and z (y and z default to 1). */
  readonly groups: readonly [x: number, y?: number, z?: number];
}

/** A fixed list of dispatches and the buffers (uniforms, scratch) it owns. */
export class DispatchPlan {
  readonly #label: string;
  readonly #dispatches: readonly Dispatch[];
  readonly #owned: readonly GPUBuffer[];

  /** `label` names the compute pass `encode` opens, e.g. 'Matmul.pass'. */
  constructor(label: string, dispatches: readonly Dispatch[], owned: readonly GPUBuffer[]) {
    this.#label = label;
    this.#dispatches = dispatches;
    this.#owned = owned;
  }

  /** Number of dispatches the plan records. */
  get dispatchCount(): number {
    return this.#dispatches.length;
  }

  /** Records the dispatches, in order, into an open compute pass. */
  record(pass: GPUComputePassEncoder): void {
    for (const { pipeline, bindGroup, groups } of this.#dispatches) {
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, bindGroup);
      pass.dispatchWorkgroups(...groups);
    }
  }

  /** Records the dispatches in a compute pass of their own. */
  encode(encoder: GPUCommandEncoder): void {
    const pass = encoder.beginComputePass({ label: this.#label });
    this.record(pass);
    pass.end();
  }

  /** Frees the buffers the plan owns; only once no submitted work still uses them. */
  destroy(): void {
    for (const buffer of this.#owned) buffer.destroy();
  }
}

/**
 * The bind group layout of a kernel that reads a uniform block and two
 * storage arrays and writes a third (bindings 0–3), shared by matmul and
 * reduce. Explicit rather than 'auto' so one bind group serves every
 * entry point and variant of a module.
 */
export function uniformTwoInOneOutLayout(device: GPUDevice, label: string): GPUBindGroupLayout {
  return device.createBindGroupLayout({
    label,
    entries: [
      { binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'uniform' } },
      { binding: 1, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'read-only-storage' } },
      { binding: 2, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'read-only-storage' } },
      { binding: 3, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } },
    ],
  });
}
