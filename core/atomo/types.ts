/**
 * The vocabulary shared by the estimators (core/atomo) and the wire format
 * (core/codec). A layer gradient is a row-major rows×cols matrix; a conv
 * kernel is viewed as out × (in·kh·kw).
 */

/** The compression schemes. `none` is the uncompressed float32 baseline. */
export type SchemeName =
  'none' | 'atomo-entry' | 'atomo-svd' | 'qsgd' | 'terngrad' | 'atomo-dct' | 'powersgd' | 'atomo-auto';

export const SCHEME_NAMES: readonly SchemeName[] = [
  'none',
  'atomo-entry',
  'atomo-svd',
  'qsgd',
  'terngrad',
  'atomo-dct',
  'powersgd',
  'atomo-auto',
];

/**
 * Whether a worker keeps error feedback for the scheme (core/atomo/errorFeedback.ts): PowerSGD always, any other
 * compressing scheme when the run asks. Their "variance" is the realised ‖ĝ − g‖².
 */
export function usesErrorFeedback(scheme: SchemeName, errorFeedback: boolean): boolean {
  return scheme === 'powersgd' || (errorFeedback && scheme !== 'none');
}

/**
 * Biased: E[ĝ] ≠ g. PowerSGD (a deterministic low-rank projection with
 * error feedback), any scheme run with error feedback (usesErrorFeedback),
 * and TernGrad clipped at ±c·σ (terngradClip c > 0), which is unbiased for
 * the clipped gradient, not for g. The dashboard and tab mark these.
 */
export function isBiased(scheme: SchemeName, errorFeedback: boolean, terngradClip = 0): boolean {
  return usesErrorFeedback(scheme, errorFeedback) || (scheme === 'terngrad' && terngradClip > 0);
}

/** The ATOMO schemes of one decomposition, whose knob is the budget s (the expected number of atoms sent per layer). */
export type AtomoSchemeName = 'atomo-entry' | 'atomo-svd' | 'atomo-dct';

/** True for the schemes that take a budget s. */
export function isAtomoScheme(scheme: SchemeName): scheme is AtomoSchemeName {
  return scheme === 'atomo-entry' || scheme === 'atomo-svd' || scheme === 'atomo-dct';
}

/**
 * True for the schemes a run may give a byte budget for the whole model
 * (Compression.byteBudget): the ATOMO schemes, and atomo-auto, which needs one.
 */
export function takesByteBudget(scheme: SchemeName): boolean {
  return isAtomoScheme(scheme) || scheme === 'atomo-auto';
}

/** The atom families of ATOMO (docs/design.md, "Decompositions"): entries, rank-one SVD atoms, DCT atoms. */
export type Decomposition = 'entry' | 'spectral' | 'dct';

/** Every decomposition, in the order atomo-auto considers them (its ties go to the first). */
export const DECOMPOSITIONS: readonly Decomposition[] = ['entry', 'spectral', 'dct'];

/** The compression of a run: its scheme and that scheme's knob (each scheme reads only its own). */
export interface Compression {
  readonly scheme: SchemeName;
  /** ATOMO budget s per layer: expected atoms sent (atomo-entry, atomo-svd, atomo-dct); PowerSGD: its rank. */
  readonly budget: number;
  /** QSGD levels s (qsgd). */
  readonly levels: number;
  /** Error feedback on an unbiased scheme (then biased, usesErrorFeedback); PowerSGD always has it. */
  readonly errorFeedback?: boolean | undefined;
  /**
   * QSGD bucket size d: one norm per d consecutive entries (512 in the QSGD paper); 0 or absent: one bucket per layer.
   */
  readonly bucketSize?: number;
  /**
   * Expected bytes of one worker's gradient per round, all layers with their
   * headers (takesByteBudget schemes; atomo-auto needs it): the worker splits
   * it across layers (core/atomo/byteBudget.ts) and `budget` is not used.
   */
  readonly byteBudget?: number | undefined;
  /** How QSGD levels travel (QsgdCoding); absent: 'elias', the QSGD paper's coding. */
  readonly qsgdCoding?: QsgdCoding | undefined;
  /** TernGrad's clipping multiple c: g clipped to ±c·σ per layer before ternarising; 0 or absent: no clipping. */
  readonly terngradClip?: number | undefined;
}

/**
 * How a QSGD sample's levels are written (docs/wire-format.md): 'elias', the QSGD paper's coding (per bucket the
 * non-zero levels only, each as an Elias-γ gap, a sign bit and an Elias-γ level), or 'fixed', a (1 + ⌈log2(s+1)⌉)-bit
 * code per entry. The estimator is the same; only the bytes differ.
 */
export type QsgdCoding = 'elias' | 'fixed';

export const QSGD_CODINGS: readonly QsgdCoding[] = ['elias', 'fixed'];

/** Shape of a layer gradient viewed as a matrix. */
export type Shape = readonly [rows: number, cols: number];

/** The uncompressed gradient, sent as float32. */
export interface DenseSample {
  readonly scheme: 'none';
  readonly shape: Shape;
  readonly values: Float32Array; // rows·cols, row-major
}

/**
 * Entry-wise ATOMO: the kept entries, each already divided by its
 * probability (λᵢ/pᵢ), so the estimate is the sparse matrix they form.
 */
export interface EntrySample {
  readonly scheme: 'atomo-entry';
  readonly shape: Shape;
  readonly indices: Uint32Array; // strictly increasing flat indices < rows·cols
  readonly values: Float32Array; // λᵢ/pᵢ for each kept index
}

/**
 * Spectral ATOMO: the kept rank-one atoms uᵢvᵢᵀ, each with its scaled
 * singular value σᵢ/pᵢ. The estimate is Σ scaleᵢ uᵢ vᵢᵀ.
 */
export interface SpectralSample {
  readonly scheme: 'atomo-svd';
  readonly shape: Shape;
  readonly count: number; // k atoms kept
  readonly u: Float32Array; // k·rows: atom i's left vector at [i·rows, (i+1)·rows)
  readonly v: Float32Array; // k·cols: atom i's right vector at [i·cols, (i+1)·cols)
  readonly scales: Float32Array; // k: σᵢ/pᵢ
}

/**
 * Fourier ATOMO: the kept coefficients of the orthonormal 2-D DCT-II of the
 * gradient (core/linalg/dct.ts), each already divided by its probability.
 * Coefficient C[k, l] has flat index k·cols + l; the estimate is the inverse
 * DCT of the sparse coefficient matrix they form.
 */
export interface DctSample {
  readonly scheme: 'atomo-dct';
  readonly shape: Shape;
  readonly indices: Uint32Array; // strictly increasing flat coefficient indices < rows·cols
  readonly values: Float32Array; // λᵢ/pᵢ for each kept coefficient
}

/**
 * PowerSGD (Vogels et al. 2019): the rank-k factors of one power step,
 * ĝ = P̂ Qᵀ = Σₐ pₐ qₐᵀ with P̂ orthonormal. Biased (see isBiased).
 */
export interface PowerSgdSample {
  readonly scheme: 'powersgd';
  readonly shape: Shape;
  readonly rank: number; // k ≤ min(rows, cols) factor columns
  readonly p: Float32Array; // k·rows: column a of P̂ at [a·rows, (a+1)·rows)
  readonly q: Float32Array; // k·cols: column a of Q = MᵀP̂ at [a·cols, (a+1)·cols)
}

/**
 * s-level QSGD (Alistarh et al. 2017): ĝᵢ = norm · sign(gᵢ) · levelᵢ / s,
 * with levelᵢ ∈ {0..s}. s = 1 is 1-bit QSGD.
 */
export interface QsgdSample {
  readonly scheme: 'qsgd';
  readonly shape: Shape;
  readonly levels: number; // s ≥ 1
  /** How the levels are written on the wire; decoding gives back the coding the message used. */
  readonly coding: QsgdCoding;
  /** Entries per bucket d; 0: the whole layer is one bucket. */
  readonly bucketSize: number;
  /** ‖g_k‖₂ of each bucket k as float32 (entries k·d .. k·d+d−1): ⌈n/d⌉ of them, or one when d = 0. */
  readonly norms: Float32Array;
  readonly negative: Uint8Array; // 1 where gᵢ < 0, per entry
  readonly level: Uint16Array; // 0..s per entry
}

/** TernGrad (Wen et al. 2017): ĝᵢ = scaler · tᵢ with tᵢ ∈ {−1, 0, +1}. */
export interface TernGradSample {
  readonly scheme: 'terngrad';
  readonly shape: Shape;
  readonly scaler: number; // ‖g‖∞ as float32
  readonly ternary: Int8Array; // −1, 0 or +1 per entry
}

/** A sample of one decomposition's atoms (what atomo-auto carries). */
export type AtomSample = EntrySample | SpectralSample | DctSample;

/**
 * ATOMO with the decomposition chosen per layer and round (atomo-auto): the
 * atoms of the one chosen, whose sample says which (atoms.scheme).
 * atoms.shape is the layer's shape.
 */
export interface AutoSample {
  readonly scheme: 'atomo-auto';
  readonly shape: Shape;
  readonly atoms: AtomSample;
}

/** What a worker sends for one layer, before encoding. */
export type LayerSample =
  DenseSample | EntrySample | SpectralSample | QsgdSample | TernGradSample | DctSample | PowerSgdSample | AutoSample;

/**
 * The decomposition a scheme's atoms belong to; 'dense' for float32; null for atomo-auto (its message says) and for the
 * schemes that are not ATOMO.
 */
export function schemeDecomposition(scheme: SchemeName): Decomposition | 'dense' | null {
  switch (scheme) {
    case 'none':
      return 'dense';
    case 'atomo-entry':
      return 'entry';
    case 'atomo-svd':
      return 'spectral';
    case 'atomo-dct':
      return 'dct';
    default:
      return null;
  }
}

/**
 * The decomposition a sample's atoms belong to; 'dense' for float32 values; null for the schemes that are not ATOMO
 * (QSGD, TernGrad, PowerSGD).
 */
export function sampleDecomposition(sample: LayerSample): Decomposition | 'dense' | null {
  return sample.scheme === 'atomo-auto' ? schemeDecomposition(sample.atoms.scheme) : schemeDecomposition(sample.scheme);
}
