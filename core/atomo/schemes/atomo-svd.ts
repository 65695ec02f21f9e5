/** Spectral ATOMO: water-filling over the singular values (the SVD's route: decompositions/spectral.ts). */
import { spectralDecomposition } from '../decompositions/spectral';
import { checkGradient } from '../gradient';
import { sampleAtoms } from './atomo';
import { DEFAULT_BUDGET, type Scheme } from './scheme';

/** ATOMO on the rank-one atoms uᵢvᵢᵀ; budget s = expected number of atoms sent. */
export const atomoSvdScheme: Scheme<'atomo-svd'> = {
  name: 'atomo-svd',
  compress(grad, shape, options, stream, factors) {
    checkGradient(grad, shape);
    const { sample, variance } = sampleAtoms(spectralDecomposition(grad, shape, factors, options.memory), options.budget ?? DEFAULT_BUDGET, stream);
    return { sample, variance };
  },
};
