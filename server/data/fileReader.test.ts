import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFileReader } from './fileReader';

describe('createFileReader', () => {
  it('reads a file of the directory as a plain Uint8Array', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'atomo-reader-'));
    try {
      await writeFile(join(directory, 'a.bin'), Uint8Array.of(1, 2, 3));
      const bytes = await createFileReader(directory)('a.bin');
      expect(Object.getPrototypeOf(bytes)).toBe(Uint8Array.prototype);
      expect(Array.from(bytes)).toEqual([1, 2, 3]);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('says how to generate a missing file', async () => {
    await expect(createFileReader(tmpdir())('no-such-file.bin')).rejects.toThrow(
      /no-such-file\.bin not found \(generate it with `npm run data`\)/,
    );
  });

  it('refuses names with a path', async () => {
    await expect(createFileReader(tmpdir())('../etc/passwd')).rejects.toThrow(/must not contain a path/);
  });
});
