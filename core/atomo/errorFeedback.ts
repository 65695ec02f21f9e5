/**
 * Error feedback (Seide et al. 2014; Karimireddy et al. 2019; the "memory"
 * of PowerSGD): each round a worker compresses M = g + e instead of g and
 * keeps e ← M − ĝ, the part it meant to send but did not. It makes any
 * scheme biased (isBiased, usesErrorFeedback) but lets a crude compressor converge; PowerSGD
 * always uses it.
 */
import type { GradientFactors } from '../linalg/factoredSvd';
import type { StreamId } from '../rng';
import { checkGradient } from './gradient';
import { reconstruct } from './reconstruct';
import { SCHEMES, type CompressedLayer, type LayerMemory, type SchemeOptions } from './schemes';
import { usesErrorFeedback, type LayerSample, type SchemeName, type Shape } from './types';
import { realisedError } from './variance';

/**
 * Compresses one layer with `scheme`, through error feedback when the
 * scheme keeps it (usesErrorFeedback: PowerSGD, or options.errorFeedback) and the
 * caller keeps options.memory. Then the reported variance is the realised
 * ‖ĝ − g‖² against this round's own gradient, not the scheme's variance
 * about M. `factors` (g = XᵀΔ for a dense weight) pass to the scheme when
 * there is no error feedback.
 */
export function compressLayer(
  scheme: SchemeName,
  grad: Float32Array,
  shape: Shape,
  options: SchemeOptions,
  stream: StreamId,
  factors?: GradientFactors,
): CompressedLayer {
  const memory = options.memory;
  if (memory === undefined || !usesErrorFeedback(scheme, options.errorFeedback === true)) {
    return SCHEMES[scheme].compress(grad, shape, options, stream, factors);
  }
  // M = g + e is not the product of g's factors, so a factored route does not apply here.
  checkGradient(grad, shape);
  const corrected = correctedGradient(grad, memory);
  const { sample } = SCHEMES[scheme].compress(Float32Array.from(corrected), shape, options, stream);
  return { sample, variance: rememberError(memory, corrected, sample, grad) };
}

/** M = g + e, the gradient error feedback compresses (e = 0 before the first round). */
export function correctedGradient(grad: Float32Array, memory: LayerMemory): Float64Array {
  const error = memory.error?.length === grad.length ? memory.error : undefined;
  const corrected = Float64Array.from(grad);
  if (error) for (let i = 0; i < corrected.length; i++) corrected[i] = corrected[i]! + error[i]!;
  return corrected;
}

/**
 * Keeps e ← M − ĝ for the next round and returns ‖ĝ − g‖², the realised error against this round's own
 * gradient.
 */
export function rememberError(
  memory: LayerMemory,
  corrected: Float64Array,
  sample: LayerSample,
  grad: Float32Array,
): number {
  const estimate = reconstruct(sample);
  const next = new Float64Array(corrected.length);
  for (let i = 0; i < next.length; i++) next[i] = corrected[i]! - estimate[i]!;
  memory.error = next;
  return realisedError(estimate, grad);
}
