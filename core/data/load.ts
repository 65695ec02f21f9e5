/** Loading MNIST on any platform: the caller injects how a file is read (fetch in a tab, fs in Node). */
import { CLASS_COUNT, Dataset, PIXELS_PER_IMAGE } from './dataset';
import { DATASETS, DEFAULT_DATASET, type DatasetName } from './datasets';
import { MnistFormatError, parseMnistHeader, verifyMnistBinary, type MnistHeader } from './format';

/** Reads one file of the data directory by name (e.g. "mnist.json") and returns its bytes. */
export type DataFileReader = (name: string) => Promise<Uint8Array>;

/** The loaded splits, plus the header they came from. */
export interface MnistData {
  readonly train: Dataset;
  readonly test: Dataset;
  readonly header: MnistHeader;
}

/**
 * Reads a dataset's header (mnist.json for MNIST, fashion.json for Fashion-MNIST) and the binary it names, verifies
 * length and CRC-32, and returns the splits.
 */
export async function loadMnist(readFile: DataFileReader, dataset: DatasetName = DEFAULT_DATASET): Promise<MnistData> {
  const header = parseMnistHeader(await readFile(DATASETS[dataset].headerFile));
  const binary = await readFile(header.binary.file);
  return decodeMnist(header, binary);
}

/** Verifies a binary against its header and slices it into train and test (views, no copies). */
export function decodeMnist(header: MnistHeader, binary: Uint8Array): MnistData {
  verifyMnistBinary(header, binary);
  const { images, labels } = header.layout;
  const allImages = binary.subarray(images.offset, images.offset + images.byteLength);
  const allLabels = binary.subarray(labels.offset, labels.offset + labels.byteLength);
  // The CRC proves the bytes are what make-data wrote; this guards against a
  // buggy writer, since a label ≥ 10 would index past the model's logits.
  const badLabel = allLabels.findIndex((label) => label >= CLASS_COUNT);
  if (badLabel >= 0) throw new MnistFormatError(`label ${allLabels[badLabel]} at example ${badLabel} is not a digit`);

  const slice = (start: number, count: number): Dataset =>
    new Dataset(
      allImages.subarray(start * PIXELS_PER_IMAGE, (start + count) * PIXELS_PER_IMAGE),
      allLabels.subarray(start, start + count),
    );
  return {
    train: slice(header.splits.train.start, header.splits.train.count),
    test: slice(header.splits.test.start, header.splits.test.count),
    header,
  };
}
