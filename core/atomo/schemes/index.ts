/** The scheme registry: SchemeName → implementation. */
import type { SchemeName } from '../types';
import { atomoAutoScheme } from './atomo-auto';
import { atomoDctScheme } from './atomo-dct';
import { atomoEntryScheme } from './atomo-entry';
import { atomoSvdScheme } from './atomo-svd';
import { noneScheme } from './none';
import { powerSgdScheme } from './powersgd';
import { qsgdScheme } from './qsgd';
import type { Scheme } from './scheme';
import { terngradScheme } from './terngrad';

/** Every scheme by name; adding a scheme means a LayerSample variant, a file here and a line below. */
export const SCHEMES: { readonly [K in SchemeName]: Scheme<K> } = {
  none: noneScheme,
  'atomo-entry': atomoEntryScheme,
  'atomo-svd': atomoSvdScheme,
  qsgd: qsgdScheme,
  terngrad: terngradScheme,
  'atomo-dct': atomoDctScheme,
  powersgd: powerSgdScheme,
  'atomo-auto': atomoAutoScheme,
};

export { sampleAtoms, type AtomoCompressed } from './atomo';
export { atomoDctScheme } from './atomo-dct';
export { atomoEntryScheme } from './atomo-entry';
export { atomoSvdScheme } from './atomo-svd';
export { noneScheme } from './none';
export { checkRank, powerSgdScheme } from './powersgd';
export { checkLevels, qsgdScheme } from './qsgd';
export {
  DEFAULT_BUDGET,
  DEFAULT_LEVELS,
  MAX_LEVELS,
  type CompressedLayer,
  type LayerMemory,
  type SampleOf,
  type Scheme,
  type SchemeOptions,
} from './scheme';
export { terngradScheme } from './terngrad';
