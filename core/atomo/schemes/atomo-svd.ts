/** Spectral ATOMO: water-filling over the singular values (the SVD's route: decompositions/spectral.ts). */
import { spectralDecomposition, spectralRouteOf } from '../decompositions/spectral';
import { checkGradient, checkGradientShape } from '../gradient';
import { atomicRealisedError } from '../variance';
import { sampleAtoms } from './atomo';
import { DEFAULT_BUDGET, type Scheme } from './scheme';

/**
 * ATOMO on the rank-one atoms uᵢvᵢᵀ; budget s = expected number of atoms sent.
 * The atoms are orthonormal, so the draw's ‖ĝ − g‖² comes from σ and the
 * scales sent (atomicRealisedError) plus what the SVD left out: the
 * factored route's cut-off directions (their σ² from the core), or
 * ‖g‖² − Σσ² on the routes that decompose g itself. ĝ is never formed.
 *
 * The factored route never reads g (a pass over 400 KB for the MLP's first
 * layer, about a fifth of its spectral step: docs/benchmarks.md): its atoms
 * decompose the factors' product, checked by factoredSvd, whose ‖g‖² is
 * Σσ² plus that residual; ‖g‖₁ is then left to the caller, which sums it
 * only on the rounds it measures the indicator (core/training/compression.ts).
 */
export const atomoSvdScheme: Scheme<'atomo-svd'> = {
  name: 'atomo-svd',
  compress(grad, shape, options, stream, factors) {
    checkGradientShape(grad, shape);
    // The routes that read g check it first: a non-finite entry is named before any SVD sees it.
    const checked =
      spectralRouteOf(shape, factors, options.memory) === 'factored' ? undefined : checkGradient(grad, shape);
    const decomposition = spectralDecomposition(grad, shape, factors, options.memory);
    const { sample, variance, kept, scales } = sampleAtoms(decomposition, options.budget ?? DEFAULT_BUDGET, stream);
    let nuclearNorm = 0;
    let energy = 0;
    for (const sigma of decomposition.coefficients) {
      nuclearNorm += sigma;
      energy += sigma * sigma;
    }
    const residual = decomposition.residual ?? Math.max(0, checked!.normSq - energy);
    const realised = atomicRealisedError(decomposition.coefficients, kept, scales, residual);
    return { sample, variance, nuclearNorm, realised, gradientNorms: checked ?? { normSq: energy + residual } };
  },
};
