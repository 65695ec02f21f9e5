import { describe, expect, it } from 'vitest';
import { dct2 } from '../linalg/dct';
import type { StreamId } from '../rng';
import { compressByBytes, type BytesLayer } from './compressByBytes';
import { dctAtoms } from './decompositions/dct';
import { spectralDecomposition } from './decompositions/spectral';
import { spectralAtoms } from './decompositions/spectralAtoms';
import { lowRankGradient, randomGradient, smoothGradient, sparseGradient } from './testing/gradients';

const streamOf = (layer: number): StreamId => ({ seed: 5, worker: 1, round: 3, layer });

/**
 * A layer with its spectral and DCT decompositions handed over as a device would: σ, atom-major float32 U and V, DCT
 * coefficients.
 */
function withGivenDecompositions(layer: BytesLayer, dctScale = 1): BytesLayer {
  const [rows, cols] = layer.shape;
  const { svd } = spectralDecomposition(layer.grad, layer.shape);
  const u = new Float32Array(svd.rank * rows);
  const v = new Float32Array(svd.rank * cols);
  for (let t = 0; t < svd.rank; t++) {
    for (let i = 0; i < rows; i++) u[t * rows + i] = svd.u[i * svd.r + t]!;
    for (let j = 0; j < cols; j++) v[t * cols + j] = svd.v[j * svd.r + t]!;
  }
  const coefficients = dct2(layer.grad, rows, cols).map((c) => c * dctScale);
  return {
    ...layer,
    decompositions: {
      spectral: spectralAtoms(layer.shape, svd.singularValues.slice(0, svd.rank), u, v),
      dct: dctAtoms(coefficients, layer.shape),
    },
  };
}

describe('compressByBytes with decompositions computed elsewhere (the GPU route)', () => {
  const layers: BytesLayer[] = [lowRankGradient(), smoothGradient(), sparseGradient(), randomGradient()];

  it('plans and draws exactly as with its own, given the same coefficients and vectors', () => {
    for (const budget of [300, 1500, 6000]) {
      const own = compressByBytes('atomo-auto', layers, budget, streamOf);
      const given = compressByBytes(
        'atomo-auto',
        layers.map((l) => withGivenDecompositions(l)),
        budget,
        streamOf,
      );
      given.forEach((layer, l) => {
        expect(layer.plan.option, `layer ${l} at ${budget}`).toBe(own[l]!.plan.option);
        expect(layer.plan.point, `layer ${l} at ${budget}`).toEqual(own[l]!.plan.point);
        expect(layer.variance).toBe(own[l]!.variance);
        expect(layer.sample).toEqual(own[l]!.sample);
      });
    }
  });

  it('uses the decompositions given, not its own: DCT coefficients doubled double the DCT layers’ error', () => {
    const smooth = [smoothGradient()];
    const own = compressByBytes('atomo-dct', smooth, 400, streamOf)[0]!;
    const doubled = compressByBytes(
      'atomo-dct',
      smooth.map((l) => withGivenDecompositions(l, 2)),
      400,
      streamOf,
    )[0]!;
    expect(own.variance).toBeGreaterThan(0);
    // V = τS − Q scales as λ², and the plan's τ with it.
    expect(doubled.variance / own.variance).toBeCloseTo(4, 6);
  });

  it('refuses spectral vectors shorter than the atoms given', () => {
    expect(() => spectralAtoms([3, 2], Float64Array.of(2, 1), new Float32Array(6), new Float32Array(3))).toThrow(
      RangeError,
    );
  });
});
