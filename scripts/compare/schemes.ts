/**
 * The settings of `npm run compare`. Budgets are matched by expected bytes
 * per round (core/codec/budgets.ts, as the dashboard's race): spectral
 * and entry-wise ATOMO are solved to send what TernGrad sends, and QSGD
 * with 1 level and a norm per 512 entries sends about the same. Two more
 * settings spend more bytes for less variance: QSGD with 3 levels (3 bits an
 * entry) and spectral ATOMO at the paper's budget s = 2; float32 is the
 * uncompressed reference.
 */
import type { SchemeName } from '../../core/atomo/types';
import { expectedBytes } from '../../core/codec';
import { createModelLayout } from '../../core/model';
import { matchedCompressions } from '../../core/codec/budgets';

/** One setting of the comparison. */
export interface CompareEntry {
  /** Short id: file name of its histories and key of the plots. */
  readonly id: string;
  /** What the tables and the legends print. */
  readonly label: string;
  readonly scheme: SchemeName;
  readonly budget: number;
  readonly levels: number;
  readonly bucketSize: number;
  /** Expected gradient bytes of one worker's round (core/codec/sizes.ts). */
  readonly expectedBytes: number;
}

/** Every setting, for a batch size. */
export function compareEntries(batchSize: number): CompareEntry[] {
  const layout = createModelLayout('mlp');
  const matched = matchedCompressions(layout, batchSize, ['atomo-svd', 'atomo-entry']);
  const budgetOf = (scheme: SchemeName) => matched.find((c) => c.scheme === scheme)!.budget;
  const make = (id: string, label: string, scheme: SchemeName, budget: number, levels = 1, bucketSize = 0): CompareEntry => ({
    id,
    label,
    scheme,
    budget,
    levels,
    bucketSize,
    expectedBytes: expectedBytes(layout, { scheme, budget, levels, bucketSize }, batchSize),
  });
  const svd = budgetOf('atomo-svd');
  const entry = budgetOf('atomo-entry');
  return [
    make('svd-matched', `ATOMO spectral s=${svd}`, 'atomo-svd', svd),
    make('entry-matched', `ATOMO entry-wise s=${entry}`, 'atomo-entry', entry),
    make('qsgd-1', 'QSGD 1 level, buckets of 512', 'qsgd', 0, 1, 512),
    make('terngrad', 'TernGrad', 'terngrad', 0),
    make('qsgd-3', 'QSGD 3 levels, buckets of 512', 'qsgd', 0, 3, 512),
    make('svd-2', 'ATOMO spectral s=2', 'atomo-svd', 2),
    make('none', 'float32 (uncompressed)', 'none', 0),
  ];
}
