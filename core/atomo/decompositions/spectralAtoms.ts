/**
 * Spectral atoms whose singular triplets were computed elsewhere (the GPU
 * route of a byte budget, client/gpu/compression/byteBudgetCompressor.ts):
 * G ≈ Σᵢ σᵢ uᵢvᵢᵀ with the vectors stored atom-major, as the device reads
 * them back and as the wire sends them. Sampling,
 * variance and bytes are those of any spectral decomposition
 * (spectral.ts), so only the source of the triplets differs.
 */
import type { Shape, SpectralSample } from '../types';
import type { AtomicDecomposition } from './decomposition';

/**
 * The decomposition with λᵢ = singularValues[i] (descending, each above the
 * noise cut-off the caller applied), uᵢ = u[i·rows, (i+1)·rows) and
 * vᵢ = v[i·cols, (i+1)·cols); u and v may hold more atoms than are given σ.
 */
export function spectralAtoms(
  shape: Shape,
  singularValues: Float64Array,
  u: Float32Array,
  v: Float32Array,
): AtomicDecomposition<SpectralSample> {
  const [rows, cols] = shape;
  const rank = singularValues.length;
  if (u.length < rank * rows || v.length < rank * cols) {
    throw new RangeError(
      `spectralAtoms: ${rank} atoms of ${rows}×${cols} need ${rank * rows} + ${rank * cols} vector ` +
        `entries, got ${u.length} + ${v.length}`,
    );
  }
  return {
    shape,
    coefficients: singularValues,
    toSample: (kept, scales) => {
      const count = kept.length;
      const keptU = new Float32Array(count * rows);
      const keptV = new Float32Array(count * cols);
      for (let a = 0; a < count; a++) {
        const atom = kept[a]!;
        keptU.set(u.subarray(atom * rows, (atom + 1) * rows), a * rows);
        keptV.set(v.subarray(atom * cols, (atom + 1) * cols), a * cols);
      }
      return { scheme: 'atomo-svd', shape, count, u: keptU, v: keptV, scales };
    },
  };
}
