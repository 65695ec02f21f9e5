/**
 * Test helpers of local training: real MNIST from public/data/ (vitest's global set-up, scripts/testData.ts, makes it).
 */
import { readFile } from 'node:fs/promises';
import { loadMnist, type MnistData } from '../../core/data';

/** Loads the MNIST splits in Node. */
export function loadMnistForTests(): Promise<MnistData> {
  const directory = new URL('../../public/data/', import.meta.url);
  return loadMnist(async (name) => new Uint8Array(await readFile(new URL(name, directory))));
}
