/** Fourier ATOMO: water-filling over the 2-D DCT-II coefficients (docs/design.md). */
import { dctDecomposition } from '../decompositions/dct';
import { checkGradient } from '../gradient';
import type { DctSample } from '../types';
import { atomicRealisedError } from '../variance';
import { sampleAtoms } from './atomo';
import { DEFAULT_BUDGET, type Scheme } from './scheme';

/** ATOMO on the cosine atoms d_k d_lᵀ; budget s = expected number of coefficients sent. */
export const atomoDctScheme: Scheme<'atomo-dct'> = {
  name: 'atomo-dct',
  compress(grad, shape, options, stream) {
    const gradientNorms = checkGradient(grad, shape);
    const decomposition = dctDecomposition(grad, shape);
    const { sample, variance } = sampleAtoms(decomposition, options.budget ?? DEFAULT_BUDGET, stream);
    return { sample, variance, realised: coefficientError(decomposition.coefficients, sample), gradientNorms };
  },
};

/**
 * ‖ĝ − g‖² of a DCT sample without the inverse transform: the atoms are
 * orthonormal, so it is ‖Ĉ − C‖² (Parseval), C the coefficients and Ĉ the
 * sparse values sent (float32): Σ_kept (Ĉₖ − Cₖ)² + Σ_not kept Cₖ².
 */
export function coefficientError(coefficients: Float64Array, sample: DctSample): number {
  return atomicRealisedError(coefficients, sample.indices, sample.values);
}
