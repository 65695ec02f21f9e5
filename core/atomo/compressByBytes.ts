/**
 * Compression of a whole gradient under a byte budget (docs/design.md,
 * "Budgets by bytes"): each layer's decompositions, their variance curves,
 * the split of the budget across layers (splitByteBudget), and one ATOMO
 * draw per layer at the water level its share buys. atomo-auto considers
 * every decomposition per layer; a fixed ATOMO scheme its own; any layer may
 * go dense.
 */
import type { GradientFactors } from '../linalg/factoredSvd';
import type { StreamId } from '../rng';
import { splitByteBudget, VarianceCurve, type LayerPlan } from './byteBudget';
import { dctDecomposition } from './decompositions/dct';
import type { AtomicDecomposition } from './decompositions/decomposition';
import { entrywiseDecomposition } from './decompositions/entrywise';
import { spectralDecomposition } from './decompositions/spectral';
import { checkGradient } from './gradient';
import { sampleAtomsAtLevel } from './schemes/atomo';
import { coefficientError } from './schemes/atomo-dct';
import {
  DECOMPOSITIONS,
  type AtomSample,
  type AtomoSchemeName,
  type Decomposition,
  type LayerSample,
  type Shape,
} from './types';

/** One layer's gradient, and its factors when the backend kept them (spectral atoms come from those). */
export interface BytesLayer {
  readonly grad: Float32Array;
  readonly shape: Shape;
  readonly factors?: GradientFactors | undefined;
  /**
   * Decompositions of this gradient computed elsewhere (the GPU route: DCT
   * coefficients and singular triplets from the device), used instead of
   * computing them here; the curves and the split are the same either way.
   */
  readonly decompositions?: Partial<Record<Decomposition, AtomicDecomposition<AtomSample>>> | undefined;
}

/**
 * One layer compressed under the split: its sample, closed-form variance, the plan it was drawn by, and what else the
 * compression found.
 */
export interface ByteCompressedLayer {
  readonly sample: LayerSample;
  readonly variance: number;
  readonly plan: LayerPlan;
  /** Σσᵢ of the layer (its spectral candidate's), when one was computed. */
  readonly nuclearNorm?: number;
  /** ‖ĝ − g‖² of a DCT draw, by Parseval in coefficient space (no inverse transform). */
  readonly realised?: number;
}

/** The schemes that compress by bytes. */
export type ByteBudgetScheme = AtomoSchemeName | 'atomo-auto';

/** A gradient's split: per layer its candidates (decomposition and curve) and the plan chosen. */
export interface BytePlan {
  readonly scheme: ByteBudgetScheme;
  readonly layers: readonly BytesLayer[];
  readonly candidates: readonly (readonly {
    readonly decomposition: AtomicDecomposition<AtomSample>;
    readonly curve: VarianceCurve;
  }[])[];
  readonly plans: readonly LayerPlan[];
}

const FAMILY: Readonly<Record<AtomoSchemeName, Decomposition>> = {
  'atomo-entry': 'entry',
  'atomo-svd': 'spectral',
  'atomo-dct': 'dct',
};

function decompose(family: Decomposition, layer: BytesLayer): AtomicDecomposition<AtomSample> {
  const given = layer.decompositions?.[family];
  if (given !== undefined) return given;
  switch (family) {
    case 'entry':
      return entrywiseDecomposition(layer.grad, layer.shape);
    case 'spectral':
      return spectralDecomposition(layer.grad, layer.shape, layer.factors);
    case 'dct':
      return dctDecomposition(layer.grad, layer.shape);
  }
}

/**
 * Decomposes every layer and splits `byteBudget` (expected bytes, headers included) across them with the least summed
 * variance.
 */
export function planByBytes(scheme: ByteBudgetScheme, layers: readonly BytesLayer[], byteBudget: number): BytePlan {
  const families = scheme === 'atomo-auto' ? DECOMPOSITIONS : [FAMILY[scheme]];
  const candidates = layers.map((layer) => {
    checkGradient(layer.grad, layer.shape);
    return families.map((family) => {
      const decomposition = decompose(family, layer);
      return { decomposition, curve: new VarianceCurve(family, layer.shape, decomposition.coefficients) };
    });
  });
  const plans = splitByteBudget(
    candidates.map((options, l) => ({ shape: layers[l]!.shape, curves: options.map((o) => o.curve) })),
    byteBudget,
  );
  return { scheme, layers, candidates, plans };
}

/** Layer l's draw under the plan, from `stream`; atomo-auto's sample names its decomposition. */
export function drawPlannedLayer(planned: BytePlan, l: number, stream: StreamId): ByteCompressedLayer {
  const layer = planned.layers[l]!;
  const plan = planned.plans[l]!;
  const spectral = planned.candidates[l]!.find((o) => o.curve.decomposition === 'spectral');
  const nuclear = spectral === undefined ? {} : { nuclearNorm: spectral.curve.l1 };
  const chosen = planned.candidates[l]!.find((o) => o.curve === plan.curve);
  if (chosen === undefined)
    return {
      sample: { scheme: 'none', shape: layer.shape, values: layer.grad.slice() },
      variance: 0,
      plan,
      ...nuclear,
    };
  const { sample, variance } = sampleAtomsAtLevel(chosen.decomposition, plan.point.tau, stream);
  const realised =
    sample.scheme === 'atomo-dct' ? { realised: coefficientError(chosen.decomposition.coefficients, sample) } : {};
  const wrapped: LayerSample =
    planned.scheme === 'atomo-auto' ? { scheme: 'atomo-auto', shape: layer.shape, atoms: sample } : sample;
  return { sample: wrapped, variance, plan, ...nuclear, ...realised };
}

/**
 * Compresses `layers` under `scheme` so that their expected bytes add up to
 * `byteBudget` (headers included) with the least summed variance; layer l
 * draws from stream(l).
 */
export function compressByBytes(
  scheme: ByteBudgetScheme,
  layers: readonly BytesLayer[],
  byteBudget: number,
  stream: (layer: number) => StreamId,
): ByteCompressedLayer[] {
  const planned = planByBytes(scheme, layers, byteBudget);
  return layers.map((_, l) => drawPlannedLayer(planned, l, stream(l)));
}
