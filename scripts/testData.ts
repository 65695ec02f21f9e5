/**
 * vitest's global set-up: the MNIST files in public/data/ exist before any test reads them, as `npm run data` makes
 * them.
 */
import { makeData } from './make-data';

export default async function setup(): Promise<void> {
  await makeData();
}
