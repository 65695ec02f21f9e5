/**
 * The one interface a decomposition implements (docs/design.md, "Decompositions"): a layer
 * gradient written in unit-norm atoms, g = Σᵢ λᵢ aᵢ. A new decomposition is
 * one new file implementing it; the sampling (water-filling, Bernoulli,
 * variance) is shared in schemes/atomo.ts.
 */
import type { LayerSample, Shape } from '../types';

/** A gradient written in atoms, and how to put a subset of them on the wire. */
export interface AtomicDecomposition<S extends LayerSample = LayerSample> {
  readonly shape: Shape;
  /**
   * λᵢ, in atom order. Atom i draws its randomness from randomBits(stream, i),
   * so this order is part of the protocol (spectral: descending σ).
   */
  readonly coefficients: Float64Array;
  /**
   * The wire sample of the kept atoms `kept` (strictly increasing atom
   * indices) with their scaled coefficients λᵢ/pᵢ, already float32.
   */
  toSample(kept: Uint32Array, scales: Float32Array): S;
}

/** Builds the decomposition of a finite rows×cols gradient (row-major). */
export type Decompose<S extends LayerSample> = (grad: Float32Array, shape: Shape) => AtomicDecomposition<S>;
