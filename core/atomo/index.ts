/**
 * core/atomo: unbiased atomic sparsification of gradients (Wang et al.,
 * NeurIPS 2018) and its special cases. The stable entry point for the rest
 * of the project.
 */
export type {
  Compression,
  DctSample,
  DenseSample,
  PowerSgdSample,
  EntrySample,
  LayerSample,
  QsgdSample,
  SchemeName,
  Shape,
  SpectralSample,
  TernGradSample,
} from './types';
export { SCHEME_NAMES, isAtomoScheme, isBiased, usesErrorFeedback, type AtomoSchemeName } from './types';
export { compressLayer } from './errorFeedback';
export { estimate, type EstimateOptions, type EstimateResult } from './estimate';
export { realisedStats, reconstruct, type RealisedStats } from './reconstruct';
export { checkBudget, samplingProbabilities } from './waterfilling';
export {
  atomicRealisedError,
  atomicVariance,
  modelVariance,
  realisedError,
  squaredNorm,
  type ModelVariance,
  type VarianceStats,
} from './variance';
export { checkGradient } from './gradient';
export type { AtomicDecomposition, Decompose } from './decompositions/decomposition';
export { dctDecomposition } from './decompositions/dct';
export { entrywiseDecomposition } from './decompositions/entrywise';
export {
  spectralDecomposition,
  spectralRoute,
  spectralRouteCosts,
  spectralRouteOf,
  type SpectralDecomposition,
  type SpectralRoute,
} from './decompositions/spectral';
export type { GradientFactors } from '../linalg/factoredSvd';
export {
  SCHEMES,
  DEFAULT_BUDGET,
  DEFAULT_LEVELS,
  MAX_LEVELS,
  atomoDctScheme,
  atomoEntryScheme,
  atomoSvdScheme,
  checkLevels,
  checkRank,
  powerSgdScheme,
  noneScheme,
  qsgdScheme,
  sampleAtoms,
  terngradScheme,
  type AtomoCompressed,
  type CompressedLayer,
  type LayerMemory,
  type SampleOf,
  type Scheme,
  type SchemeOptions,
} from './schemes';
