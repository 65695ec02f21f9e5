/**
 * The settings of `npm run compare`. Budgets are matched by expected bytes
 * per round (core/codec/budgets.ts, as the dashboard's race): spectral,
 * entry-wise and Fourier ATOMO and PowerSGD's rank are solved to send what
 * TernGrad sends, QSGD with 1 level and a norm per 512 entries sends about
 * the same, and atomo-auto gets those bytes as its byte budget (as do
 * spectral and entry-wise ATOMO once more, split across layers the same way,
 * so that atomo-auto is compared with both fixed decompositions at equal bytes). Two more settings spend more bytes for
 * less variance: QSGD
 * with 3 levels (3 bits an entry) and spectral ATOMO at the paper's budget
 * s = 2; float32 is the uncompressed reference. On the MLP, whose float32
 * model is most of the traffic, byte-matched spectral ATOMO and PowerSGD
 * also run with the compressed downlinks (docs/protocol.md, "Downlink").
 */
import type { SchemeName } from '../../core/atomo/types';
import { matchedCompressions } from '../../core/codec/budgets';
import { expectedBytes } from '../../core/codec';
import { createModelLayout, type ModelKind } from '../../core/model';
import { DEFAULT_DOWNLINK_BUDGET, type DownlinkMode } from '../../core/schema';

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
  /** How the model goes down to the workers, and the `atomo` downlink's budget. */
  readonly downlink: DownlinkMode;
  readonly downlinkBudget: number;
  /**
   * Bytes per worker-round split across layers by the worker (atomo-auto's knob; the fixed ATOMO schemes may take it
   * too).
   */
  readonly byteBudget?: number;
  /** Expected gradient bytes of one worker's round (core/codec/sizes.ts). */
  readonly expectedBytes: number;
}

const DOWNLINK_LABELS: Readonly<Record<DownlinkMode, string>> = {
  full: '',
  relay: ', relay downlink',
  atomo: `, ATOMO downlink s=${DEFAULT_DOWNLINK_BUDGET}`,
};

/** Every setting for a model and a batch size. */
export function compareEntries(model: ModelKind, batchSize: number): CompareEntry[] {
  const layout = createModelLayout(model);
  const matched = matchedCompressions(layout, batchSize, [
    'atomo-svd',
    'atomo-entry',
    'atomo-dct',
    'powersgd',
    'atomo-auto',
  ]);
  const budgetOf = (scheme: SchemeName) => matched.find((c) => c.scheme === scheme)!.budget;
  const make = (
    id: string,
    label: string,
    scheme: SchemeName,
    budget: number,
    levels = 1,
    bucketSize = 0,
    downlink: DownlinkMode = 'full',
    byteBudget?: number,
  ): CompareEntry => ({
    id: downlink === 'full' ? id : `${id}-${downlink}`,
    label: `${label}${DOWNLINK_LABELS[downlink]}`,
    scheme,
    budget,
    levels,
    bucketSize,
    downlink,
    downlinkBudget: DEFAULT_DOWNLINK_BUDGET,
    ...(byteBudget === undefined ? {} : { byteBudget }),
    expectedBytes: expectedBytes(
      layout,
      { scheme, budget, levels, bucketSize, ...(byteBudget === undefined ? {} : { byteBudget }) },
      batchSize,
    ),
  });
  const svd = budgetOf('atomo-svd');
  const entry = budgetOf('atomo-entry');
  const dct = budgetOf('atomo-dct');
  const rank = budgetOf('powersgd');
  const bytes = matched.find((c) => c.scheme === 'atomo-auto')!.byteBudget!;
  const uplink = [
    make('svd-matched', `ATOMO spectral s=${svd}`, 'atomo-svd', svd),
    make('entry-matched', `ATOMO entry-wise s=${entry}`, 'atomo-entry', entry),
    make('dct-matched', `ATOMO Fourier (DCT) s=${dct}`, 'atomo-dct', dct),
    make('auto-matched', `ATOMO auto per layer, ${bytes} B`, 'atomo-auto', 0, 1, 0, 'full', bytes),
    // The fixed decompositions with the same bytes split across layers as atomo-auto splits them: its fair baselines.
    make('svd-bytes', `ATOMO spectral, ${bytes} B split across layers`, 'atomo-svd', svd, 1, 0, 'full', bytes),
    make('entry-bytes', `ATOMO entry-wise, ${bytes} B split across layers`, 'atomo-entry', entry, 1, 0, 'full', bytes),
    make('powersgd-matched', `PowerSGD rank ${rank} (biased)`, 'powersgd', rank),
    make('qsgd-1', 'QSGD 1 level, buckets of 512', 'qsgd', 0, 1, 512),
    make('terngrad', 'TernGrad', 'terngrad', 0),
    make('qsgd-3', 'QSGD 3 levels, buckets of 512', 'qsgd', 0, 3, 512),
    make('svd-2', 'ATOMO spectral s=2', 'atomo-svd', 2),
    make('none', 'float32 (uncompressed)', 'none', 0),
  ];
  if (model !== 'mlp') return uplink;
  return [
    ...uplink,
    make('svd-matched', `ATOMO spectral s=${svd}`, 'atomo-svd', svd, 1, 0, 'relay'),
    make('svd-matched', `ATOMO spectral s=${svd}`, 'atomo-svd', svd, 1, 0, 'atomo'),
    make('powersgd-matched', `PowerSGD rank ${rank} (biased)`, 'powersgd', rank, 1, 0, 'relay'),
  ];
}
