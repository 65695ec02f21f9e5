/** Spectral ATOMO: water-filling over the singular values (the SVD's route: decompositions/spectral.ts). */
import { spectralDecomposition } from '../decompositions/spectral';
import { checkGradient } from '../gradient';
import { atomicRealisedError } from '../variance';
import { sampleAtoms } from './atomo';
import { DEFAULT_BUDGET, type Scheme } from './scheme';

/**
 * ATOMO on the rank-one atoms uᵢvᵢᵀ; budget s = expected number of atoms sent.
 * The atoms are orthonormal, so the draw's ‖ĝ − g‖² comes from σ and the
 * scales sent (atomicRealisedError) plus what the SVD left out: the
 * factored route's cut-off directions (their σ² from the core), or
 * ‖g‖² − Σσ² on the routes that decompose g itself. ĝ is never formed.
 */
export const atomoSvdScheme: Scheme<'atomo-svd'> = {
  name: 'atomo-svd',
  compress(grad, shape, options, stream, factors) {
    const gradientNorms = checkGradient(grad, shape);
    const decomposition = spectralDecomposition(grad, shape, factors, options.memory);
    const { sample, variance, kept, scales } = sampleAtoms(decomposition, options.budget ?? DEFAULT_BUDGET, stream);
    let nuclearNorm = 0;
    let energy = 0;
    for (const sigma of decomposition.coefficients) {
      nuclearNorm += sigma;
      energy += sigma * sigma;
    }
    const residual = decomposition.residual ?? Math.max(0, gradientNorms.normSq - energy);
    const realised = atomicRealisedError(decomposition.coefficients, kept, scales, residual);
    return { sample, variance, nuclearNorm, realised, gradientNorms };
  },
};
