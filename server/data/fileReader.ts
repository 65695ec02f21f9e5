/** Node's DataFileReader: reads data files from a directory (public/data/ by default). */
import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DataFileReader } from '../../core/data';

/** public/data/ of this checkout, independent of the working directory. */
export const DEFAULT_DATA_DIRECTORY = fileURLToPath(new URL('../../public/data/', import.meta.url));

/** A reader of `<directory>/<name>`; rejects names that would leave the directory. */
export function createFileReader(directory: string = DEFAULT_DATA_DIRECTORY): DataFileReader {
  return async (name) => {
    if (basename(name) !== name || name === '..' || name === '.')
      throw new Error(`Data file name must not contain a path: ${JSON.stringify(name)}`);
    const path = join(directory, name);
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch (error) {
      const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
      if (missing) throw new Error(`${path} not found (generate it with \`npm run data\`)`, { cause: error });
      throw error;
    }
    // A plain Uint8Array view, so callers never depend on Buffer's extra methods.
    return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };
}
