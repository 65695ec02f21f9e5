/**
 * WGSL has no #include: kernels that share functions (Philox, the stream
 * addressing) are compiled from the shared fragments followed by the kernel.
 */
import philoxWgsl from '../../shaders/philox.wgsl?raw';
import bernoulliStreamWgsl from '../../shaders/bernoulli_stream.wgsl?raw';

/** Joins WGSL fragments in order, one blank line apart (a fragment may end without a newline). */
export function concatWgsl(...fragments: readonly string[]): string {
  return fragments.join('\n\n');
}

/** philox.wgsl + bernoulli_stream.wgsl + `kernel`: what a kernel that draws random bits is compiled from. */
export function withRandomStream(kernel: string): string {
  return concatWgsl(philoxWgsl, bernoulliStreamWgsl, kernel);
}
