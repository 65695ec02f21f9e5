/** The uncompressed float32 baseline: ĝ = g, variance 0. */
import { checkGradient } from '../gradient';
import type { Scheme } from './scheme';

/** Sends the gradient as it is (a copy, so later edits of `grad` do not change the sample). */
export const noneScheme: Scheme<'none'> = {
  name: 'none',
  compress(grad, shape) {
    checkGradient(grad, shape);
    return { sample: { scheme: 'none', shape, values: grad.slice() }, variance: 0 };
  },
};
