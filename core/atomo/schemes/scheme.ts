/** What every compression scheme implements, and the defaults the public API uses. */
import type { GradientFactors } from '../../linalg/factoredSvd';
import type { StreamId } from '../../rng';
import type { KnownNorms } from '../gradient';
import type { DenseSample, LayerSample, QsgdCoding, SchemeName, Shape } from '../types';

/**
 * ATOMO budget when none is given: s = 2, two rank-one atoms per layer on
 * average for spectral ATOMO. Entry-wise callers normally choose s from a
 * byte target instead (two entries is a tiny message).
 */
export const DEFAULT_BUDGET = 2;
/** QSGD levels when none are given: s = 1, 1-bit QSGD. */
export const DEFAULT_LEVELS = 1;
/** QSGD levels travel as u16 (types.ts QsgdSample.level). */
export const MAX_LEVELS = 0xffff;
/** QSGD's coding when none is given: the paper's Elias coding. */
export const DEFAULT_QSGD_CODING: QsgdCoding = 'elias';

/** Knobs of the schemes; each reads only its own. */
export interface SchemeOptions {
  /** ATOMO budget s = Σ pᵢ, the expected number of atoms sent (> 0; Infinity sends all). */
  readonly budget?: number;
  /** QSGD levels s, an integer in 1..65535. */
  readonly levels?: number;
  /**
   * What this worker keeps for this layer between rounds. Without it every
   * call starts afresh: no error feedback, PowerSGD from a random Q.
   */
  readonly memory?: LayerMemory;
  /** Add last round's unsent error to the gradient first (compressLayer); always on for PowerSGD. */
  readonly errorFeedback?: boolean | undefined;
  /** QSGD bucket size d (0 or absent: one bucket per layer). */
  readonly bucketSize?: number;
  /** QSGD's coding on the wire (absent: DEFAULT_QSGD_CODING); the draws do not depend on it. */
  readonly qsgdCoding?: QsgdCoding | undefined;
  /** TernGrad: clip each layer's gradient to ±c·σ (σ its entries' standard deviation) first; 0 or absent: none. */
  readonly terngradClip?: number | undefined;
  /**
   * atomo-auto: this layer's expected bytes, header included (a whole model's budget is split across layers first:
   * compressByBytes).
   */
  readonly byteBudget?: number | undefined;
}

/** One worker's state for one layer, kept between rounds and updated by each compression. */
export interface LayerMemory {
  /** Error feedback e = M − ĝ: what was meant to be sent but was not (rows·cols, row-major). */
  error?: Float64Array;
  /** PowerSGD's last Q (k·cols, column a at [a·cols, (a+1)·cols)), the warm start of the next power step. */
  q?: Float64Array;
  /**
   * Spectral ATOMO's last right singular subspace (cols × rank, column-major): the range finder's warm start
   * (decompositions/spectral.ts).
   */
  subspace?: Float64Array;
}

/**
 * One layer after compression: the wire sample and E‖ĝ − g‖² of its
 * estimate: the closed-form variance for the unbiased schemes, the realised
 * squared error for the ones with error feedback (types.ts usesErrorFeedback).
 */
export interface CompressedLayer<S extends LayerSample = LayerSample> {
  readonly sample: S;
  readonly variance: number;
  /**
   * ‖G‖_* = Σσᵢ of the gradient compressed, when the scheme computed its singular values anyway (spectral
   * ATOMO).
   */
  readonly nuclearNorm?: number;
  /**
   * ‖ĝ − g‖² of this draw, when the scheme has it without reconstructing ĝ (orthonormal atoms: Fourier and
   * spectral ATOMO, by Parseval).
   */
  readonly realised?: number;
  /**
   * ‖g‖² and ‖g‖₁, when the scheme summed them while checking g
   * (core/atomo/gradient.ts); ‖g‖² alone when it had that without reading g
   * (spectral ATOMO's factored route).
   */
  readonly gradientNorms?: KnownNorms;
}

/** The wire sample type of a scheme; atomo-auto may also send a layer dense, when its byte budget reaches float32. */
export type SampleOf<K extends SchemeName> =
  Extract<LayerSample, { readonly scheme: K }> | (K extends 'atomo-auto' ? DenseSample : never);

/**
 * A compression scheme: gradient → unbiased sample, randomness only from
 * `stream` (atom i uses randomBits(stream, i)). `factors`, when the backend
 * has them, are the gradient's factors grad = Xᵀ·Δ (a dense layer's
 * input and output delta); a scheme may use them to skip work on the full
 * gradient (spectral ATOMO does), the others ignore them.
 */
export interface Scheme<K extends SchemeName = SchemeName> {
  readonly name: K;
  compress(
    grad: Float32Array,
    shape: Shape,
    options: SchemeOptions,
    stream: StreamId,
    factors?: GradientFactors,
  ): CompressedLayer<SampleOf<K>>;
}
