/** The held-out split of a dataset, read from public/data/ for the aggregator's evaluations. */
import { Dataset, loadMnist, type DatasetName } from '../../core/data';
import { DEFAULT_DATA_DIRECTORY, createFileReader } from './fileReader';

/**
 * Loads `dataset` and copies its test split out, so the training split's bytes (Fashion-MNIST's 47 MB) are not kept
 * alive by a view into the binary. Missing or corrupt files reject naming `npm run data`.
 */
export async function loadTestSet(dataset: DatasetName, directory: string = DEFAULT_DATA_DIRECTORY): Promise<Dataset> {
  const { test } = await loadMnist(createFileReader(directory), dataset);
  return new Dataset(test.images.slice(), test.labels.slice());
}
