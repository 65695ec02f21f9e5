/** Builds the MNIST header and binary (see format.ts) from examples already in split order. */
import { asciiToBytes } from './ascii';
import { crc32Hex } from './crc32';
import { CLASS_COUNT, IMAGE_COLS, IMAGE_ROWS, PIXELS_PER_IMAGE } from './dataset';
import { MNIST_BINARY_FILE, MNIST_FORMAT, MNIST_FORMAT_VERSION, type MnistHeader, type MnistSource } from './format';

/** Examples to pack: train first, then test. */
export interface MnistExamples {
  /** total·784 pixel bytes in split order. */
  readonly images: Uint8Array;
  /** total labels, 0–9, in split order. */
  readonly labels: Uint8Array;
  /** The first trainCount examples are the training split, the rest the test split. */
  readonly trainCount: number;
  readonly source: MnistSource;
  /** The binary's file name, recorded in the header; mnist.bin when absent. */
  readonly binaryFile?: string;
}

/** The two files' contents, ready to write. */
export interface PackedMnist {
  readonly header: MnistHeader;
  /** mnist.json: the header as indented ASCII JSON with a trailing newline. */
  readonly headerBytes: Uint8Array;
  /** mnist.bin */
  readonly binary: Uint8Array;
}

/** Lays out images then labels in one binary and describes it in a header with its CRC-32. */
export function packMnist(examples: MnistExamples): PackedMnist {
  const total = examples.labels.length;
  if (examples.images.length !== total * PIXELS_PER_IMAGE) {
    throw new RangeError(`packMnist: ${examples.images.length} pixel bytes for ${total} labels`);
  }
  if (!Number.isInteger(examples.trainCount) || examples.trainCount < 0 || examples.trainCount > total) {
    throw new RangeError(`packMnist: trainCount ${examples.trainCount} outside 0..${total}`);
  }
  const badLabel = examples.labels.findIndex((label) => label >= CLASS_COUNT);
  if (badLabel >= 0)
    throw new RangeError(`packMnist: label ${examples.labels[badLabel]} at ${badLabel} is not a digit`);

  const binary = new Uint8Array(examples.images.length + total);
  binary.set(examples.images, 0);
  binary.set(examples.labels, examples.images.length);

  const header: MnistHeader = {
    format: MNIST_FORMAT,
    version: MNIST_FORMAT_VERSION,
    rows: IMAGE_ROWS,
    cols: IMAGE_COLS,
    classes: CLASS_COUNT,
    splits: {
      train: { start: 0, count: examples.trainCount },
      test: { start: examples.trainCount, count: total - examples.trainCount },
    },
    layout: {
      images: { offset: 0, byteLength: examples.images.length },
      labels: { offset: examples.images.length, byteLength: total },
    },
    binary: { file: examples.binaryFile ?? MNIST_BINARY_FILE, byteLength: binary.length, crc32: crc32Hex(binary) },
    source: examples.source,
  };
  return { header, headerBytes: asciiToBytes(`${JSON.stringify(header, null, 2)}\n`), binary };
}
