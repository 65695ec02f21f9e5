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
    const decomposition = spectralDecomposition(grad, shape, factors, options.memory);
    const { sample, variance } = sampleAtoms(decomposition, options.budget ?? DEFAULT_BUDGET, stream);
    let nuclearNorm = 0;
    for (const sigma of decomposition.coefficients) nuclearNorm += sigma;
    return { sample, variance, nuclearNorm };
  },
};
