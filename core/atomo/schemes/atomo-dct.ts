/** Fourier ATOMO: water-filling over the 2-D DCT-II coefficients (docs/design.md). */
import { dctDecomposition } from '../decompositions/dct';
import { checkGradient } from '../gradient';
import type { DctSample } from '../types';
import { sampleAtoms } from './atomo';
import { DEFAULT_BUDGET, type Scheme } from './scheme';

/** ATOMO on the cosine atoms d_k d_lᵀ; budget s = expected number of coefficients sent. */
export const atomoDctScheme: Scheme<'atomo-dct'> = {
  name: 'atomo-dct',
  compress(grad, shape, options, stream) {
    checkGradient(grad, shape);
    const decomposition = dctDecomposition(grad, shape);
    const { sample, variance } = sampleAtoms(decomposition, options.budget ?? DEFAULT_BUDGET, stream);
    return { sample, variance, realised: coefficientError(decomposition.coefficients, sample) };
  },
};

/**
 * ‖ĝ − g‖² of a DCT sample without the inverse transform: the atoms are
 * orthonormal, so it is ‖Ĉ − C‖² (Parseval), C the coefficients and Ĉ the
 * sparse values sent (float32): Σ_kept (Ĉₖ − Cₖ)² + Σ_not kept Cₖ².
 */
export function coefficientError(coefficients: Float64Array, sample: DctSample): number {
  let unsent = 0;
  for (let i = 0; i < coefficients.length; i++) unsent += coefficients[i]! * coefficients[i]!;
  let error = 0;
  for (let k = 0; k < sample.indices.length; k++) {
    const c = coefficients[sample.indices[k]!]!;
    const d = sample.values[k]! - c;
    unsent -= c * c;
    error += d * d;
  }
  return error + Math.max(0, unsent);
}
