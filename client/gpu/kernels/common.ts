/**
 * Host of shaders/common/: the WGSL fragments several kernel families share.
 * WGSL has no #include, so a kernel that needs them is compiled from the
 * fragments followed by the kernel's own text:
 *   structs.wgsl        the structs more than one kernel uses (StreamId, MatrixState, ConvParams, PoolParams)
 *   common/philox.wgsl         Philox4x32-10, bit for bit core/rng/philox.ts
 *   random_stream.wgsl  stream addressing and the integer Bernoulli test (core/rng/stream.ts)
 *   grid.wgsl           the `main` of a kernel with one invocation per item (its itemCount() and item(i))
 *   jobs.wgsl           the `main` of a kernel with one workgroup per job of its job table (its runJob(job, tid))
 *   power_of_two.wgsl   the exact power-of-two scaling of the SVD and QR passes (MatrixState.scaleExp)
 *   elements.wgsl       itemCount() and the workgroup size of a kernel with one item per element of params.count
 */
import structsWgsl from '../../../shaders/common/structs.wgsl?raw';
import philoxWgsl from '../../../shaders/common/philox.wgsl?raw';
import randomStreamWgsl from '../../../shaders/common/random_stream.wgsl?raw';
import gridWgsl from '../../../shaders/common/grid.wgsl?raw';
import elementsWgsl from '../../../shaders/common/elements.wgsl?raw';
import jobsWgsl from '../../../shaders/common/jobs.wgsl?raw';
import powerOfTwoWgsl from '../../../shaders/common/power_of_two.wgsl?raw';

/** Joins WGSL fragments in order, one blank line apart (a fragment may end without a newline). */
export function concatWgsl(...fragments: readonly string[]): string {
  return fragments.join('\n\n');
}

/** `kernel` (its fragments in order) followed by grid.wgsl: one invocation per item, on the grid gridForItems makes. */
export function withGrid(...kernel: readonly string[]): string {
  return concatWgsl(...kernel, gridWgsl);
}

/**
 * `kernel` followed by elements.wgsl and grid.wgsl: one invocation per element, params.count of them, 256 per
 * workgroup.
 */
export function withElements(...kernel: readonly string[]): string {
  return withGrid(...kernel, elementsWgsl);
}

/** `kernel` (its fragments in order) followed by jobs.wgsl: one workgroup per job, `jobs[workgroup_id.x]`. */
export function withJobs(...kernel: readonly string[]): string {
  return concatWgsl(...kernel, jobsWgsl);
}

/**
 * structs.wgsl and power_of_two.wgsl followed by `kernel`: a pass that scales matrices by MatrixState.scaleExp, or
 * undoes it.
 */
export function withScaling(...kernel: readonly string[]): string {
  return withStructs(powerOfTwoWgsl, ...kernel);
}

/** structs.wgsl followed by `kernel` (its fragments in order). */
export function withStructs(...kernel: readonly string[]): string {
  return concatWgsl(structsWgsl, ...kernel);
}

/**
 * structs.wgsl, common/philox.wgsl and random_stream.wgsl followed by `kernel`: what a kernel that draws random bits is
 * compiled from.
 */
export function withRandomStream(...kernel: readonly string[]): string {
  return concatWgsl(structsWgsl, philoxWgsl, randomStreamWgsl, ...kernel);
}
