/**
 * The ATOMO sampler shared by every decomposition (docs/design.md, "Estimator"):
 * pᵢ from water-filling, tᵢ ~ Bernoulli(pᵢ), send λᵢ/pᵢ for the kept atoms,
 * ĝ = Σᵢ (λᵢtᵢ/pᵢ) aᵢ.
 */
import { bernoulli, randomBits, type StreamId } from '../../rng';
import type { AtomicDecomposition } from '../decompositions/decomposition';
import type { LayerSample } from '../types';
import { atomicVariance } from '../variance';
import { samplingProbabilities } from '../waterfilling';
import type { CompressedLayer } from './scheme';

/** A compressed layer plus the probabilities it was drawn with. */
export interface AtomoCompressed<S extends LayerSample> extends CompressedLayer<S> {
  readonly probabilities: Float64Array;
  /** The atoms drawn, increasing, and the float32 λᵢ/pᵢ sent for each (what toSample was given). */
  readonly kept: Uint32Array;
  readonly scales: Float32Array;
}

/**
 * Samples the atoms of a decomposition with budget s: atom i is kept iff
 * bernoulli(randomBits(stream, i), pᵢ), and sent as float32(λᵢ/pᵢ). The
 * variance is Σ λᵢ²(1/pᵢ − 1) (exact for orthonormal atoms).
 *
 * Atoms with p = 0 (λ = 0) or p = 1 skip the draw: its outcome is fixed, and
 * counter-based draws of other atoms do not depend on it.
 *
 * The integer-domain Bernoulli realises round(p·2²⁴)/2²⁴, not p; the bias
 * this leaves is at most τ·2⁻²⁵ per atom (τ the water level), the same size
 * as the float32 rounding of the value λ/p ≈ τ that is sent.
 */
export function sampleAtoms<S extends LayerSample>(
  decomposition: AtomicDecomposition<S>,
  budget: number,
  stream: StreamId,
): AtomoCompressed<S> {
  return drawAtoms(decomposition, samplingProbabilities(decomposition.coefficients, budget), stream);
}

/**
 * sampleAtoms at a water level τ already known (a split by bytes finds it,
 * core/atomo/byteBudget.ts): pᵢ = min(1, |λᵢ|/τ), τ = 0 keeping every
 * non-zero atom; no sort needed.
 */
export function sampleAtomsAtLevel<S extends LayerSample>(
  decomposition: AtomicDecomposition<S>,
  tau: number,
  stream: StreamId,
): AtomoCompressed<S> {
  const lambda = decomposition.coefficients;
  const probabilities = new Float64Array(lambda.length);
  for (let i = 0; i < lambda.length; i++) {
    const a = Math.abs(lambda[i]!);
    probabilities[i] = a === 0 ? 0 : tau === 0 ? 1 : Math.min(1, a / tau);
  }
  return drawAtoms(decomposition, probabilities, stream);
}

/**
 * Atom i kept iff bernoulli(randomBits(stream, i), pᵢ), sent as float32(λᵢ/pᵢ); the variance Σλ²(1/p − 1).
 */
function drawAtoms<S extends LayerSample>(
  decomposition: AtomicDecomposition<S>,
  probabilities: Float64Array,
  stream: StreamId,
): AtomoCompressed<S> {
  const lambda = decomposition.coefficients;
  const kept: number[] = [];
  const scales: number[] = [];
  for (let i = 0; i < lambda.length; i++) {
    const p = probabilities[i]!;
    if (p === 0) continue;
    if (p < 1 && !bernoulli(randomBits(stream, i), p)) continue;
    kept.push(i);
    scales.push(lambda[i]! / p);
  }
  const keptAtoms = Uint32Array.from(kept);
  const sent = Float32Array.from(scales);
  const sample = decomposition.toSample(keptAtoms, sent);
  return { sample, variance: atomicVariance(lambda, probabilities), probabilities, kept: keptAtoms, scales: sent };
}
