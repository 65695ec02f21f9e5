/** Entry-wise atoms (docs/design.md, "Decompositions"): aᵢ = eᵢ, λᵢ = gᵢ, i the row-major flat index. */
import type { EntrySample, Shape } from '../types';
import type { AtomicDecomposition } from './decomposition';

/** g = Σᵢ gᵢ eᵢ: the standard basis, so the wire sample is (index, λᵢ/pᵢ) pairs. */
export function entrywiseDecomposition(grad: Float32Array, shape: Shape): AtomicDecomposition<EntrySample> {
  return {
    shape,
    coefficients: Float64Array.from(grad),
    toSample: (kept, scales) => ({ scheme: 'atomo-entry', shape, indices: kept, values: scales }),
  };
}
