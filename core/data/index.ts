/**
 * MNIST and Fashion-MNIST data: the file format, a platform-agnostic loader, sharding across workers and
 * minibatches.
 */
export { crc32, crc32Hex, crc32Update } from './crc32';
export { CLASS_COUNT, IMAGE_COLS, IMAGE_ROWS, PIXELS_PER_IMAGE, Dataset, createBatch, type Batch } from './dataset';
export {
  MNIST_BINARY_FILE,
  MNIST_FORMAT,
  MNIST_FORMAT_VERSION,
  MNIST_HEADER_FILE,
  MnistFormatError,
  parseMnistHeader,
  validateMnistHeader,
  verifyMnistBinary,
  type ByteRange,
  type ExampleRange,
  type MnistHeader,
  type MnistSource,
} from './format';
export {
  DATASETS,
  DATASET_NAMES,
  DEFAULT_DATASET,
  isDatasetName,
  type DatasetInfo,
  type DatasetName,
} from './datasets';
export { packMnist, type MnistExamples, type PackedMnist } from './pack';
export { loadMnist, decodeMnist, type DataFileReader, type MnistData } from './load';
export { DataStreamTag, DrawSequence } from './random';
export { randomPermutation, shuffleInPlace } from './permutation';
export { sampleGamma, sampleLogGamma, sampleSymmetricDirichlet } from './gamma';
export { shardIid, shardDirichlet, shardLabelCounts, type Shards } from './shard';
export { MinibatchSampler, minibatchIndices } from './minibatch';
