/** Entry-wise ATOMO: water-filling over the entries gᵢ (docs/design.md, "Water-filling"). */
import { entrywiseDecomposition } from '../decompositions/entrywise';
import { checkGradient } from '../gradient';
import { sampleAtoms } from './atomo';
import { DEFAULT_BUDGET, type Scheme } from './scheme';

/** ATOMO on the standard basis; budget s = expected number of entries sent. */
export const atomoEntryScheme: Scheme<'atomo-entry'> = {
  name: 'atomo-entry',
  compress(grad, shape, options, stream) {
    checkGradient(grad, shape);
    const { sample, variance } = sampleAtoms(
      entrywiseDecomposition(grad, shape),
      options.budget ?? DEFAULT_BUDGET,
      stream,
    );
    return { sample, variance };
  },
};
