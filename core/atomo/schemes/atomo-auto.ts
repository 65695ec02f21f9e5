/**
 * ATOMO with the decomposition chosen per layer and round (docs/design.md,
 * "Budgets by bytes"): entries, spectral or DCT atoms, whichever has the
 * lowest closed-form variance at the layer's byte budget, or dense float32
 * when that budget reaches it. The sample names the decomposition chosen.
 */
import { compressByBytes } from '../compressByBytes';
import type { Scheme } from './scheme';

/**
 * One layer on its own: options.byteBudget is this layer's expected bytes (a run's budget for the whole model is split
 * first, compressByBytes).
 */
export const atomoAutoScheme: Scheme<'atomo-auto'> = {
  name: 'atomo-auto',
  compress(grad, shape, options, stream, factors) {
    const bytes = options.byteBudget;
    if (bytes === undefined) throw new RangeError('atomo-auto needs a byte budget');
    const [layer] = compressByBytes('atomo-auto', [{ grad, shape, factors }], bytes, () => stream);
    const { sample, plan: _plan, ...found } = layer!;
    if (sample.scheme !== 'atomo-auto' && sample.scheme !== 'none')
      throw new Error(`atomo-auto drew a ${sample.scheme} sample`);
    return { sample, ...found };
  },
};
