/** Test helpers of local training: real MNIST from public/data/ (generated when absent, as `npm run data` would). */
import { readFile } from 'node:fs/promises';
import { loadMnist, type MnistData } from '../../core/data';
import { makeData } from '../../scripts/make-data';

/** Loads the MNIST splits in Node. */
export async function loadMnistForTests(): Promise<MnistData> {
  await makeData();
  const directory = new URL('../../public/data/', import.meta.url);
  return loadMnist(async (name) => new Uint8Array(await readFile(new URL(name, directory))));
}
