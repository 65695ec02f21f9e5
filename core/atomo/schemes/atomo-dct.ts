/** Fourier ATOMO: water-filling over the 2-D DCT-II coefficients (docs/design.md). */
import { dctDecomposition } from '../decompositions/dct';
import { checkGradient } from '../gradient';
import { sampleAtoms } from './atomo';
import { DEFAULT_BUDGET, type Scheme } from './scheme';

/** ATOMO on the cosine atoms d_k d_lᵀ; budget s = expected number of coefficients sent. */
export const atomoDctScheme: Scheme<'atomo-dct'> = {
  name: 'atomo-dct',
  compress(grad, shape, options, stream) {
    checkGradient(grad, shape);
    const { sample, variance } = sampleAtoms(dctDecomposition(grad, shape), options.budget ?? DEFAULT_BUDGET, stream);
    return { sample, variance };
  },
};
