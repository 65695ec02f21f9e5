/** The runs of `npm run compare`: every scheme of the paper's comparison, at the knobs docs/results.md reports. */
import type { SchemeName } from '../../core/atomo/types';
import { DEFAULT_BUDGETS, DEFAULT_QSGD_LEVELS } from '../../core/schema';

/** One run of the comparison. */
export interface CompareEntry {
  /** Short id: file name of its history and key of the plots. */
  readonly id: string;
  /** What the table and the legends print. */
  readonly label: string;
  readonly scheme: SchemeName;
  readonly budget: number;
  readonly levels: number;
}

const entry = (id: string, label: string, scheme: SchemeName, budget: number, levels = DEFAULT_QSGD_LEVELS): CompareEntry => ({
  id,
  label,
  scheme,
  budget,
  levels,
});

/** none; atomo-svd s = 1, 2, 4; atomo-entry and atomo-dct (default budget); qsgd 1, 4, 16 levels; terngrad. */
export const COMPARE_ENTRIES: readonly CompareEntry[] = [
  entry('none', 'none (float32)', 'none', 0),
  entry('svd-1', 'ATOMO spectral s=1', 'atomo-svd', 1),
  entry('svd-2', 'ATOMO spectral s=2', 'atomo-svd', 2),
  entry('svd-4', 'ATOMO spectral s=4', 'atomo-svd', 4),
  entry('entry', `ATOMO entry-wise s=${DEFAULT_BUDGETS['atomo-entry']}`, 'atomo-entry', DEFAULT_BUDGETS['atomo-entry']),
  entry('dct', `ATOMO Fourier (DCT) s=${DEFAULT_BUDGETS['atomo-dct']}`, 'atomo-dct', DEFAULT_BUDGETS['atomo-dct']),
  entry('qsgd-1', 'QSGD 1 level', 'qsgd', 0, 1),
  entry('qsgd-4', 'QSGD 4 levels', 'qsgd', 0, 4),
  entry('qsgd-16', 'QSGD 16 levels', 'qsgd', 0, 16),
  entry('terngrad', 'TernGrad', 'terngrad', 0),
];
