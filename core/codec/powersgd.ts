/**
 * Scheme `powersgd` (id 6), PowerSGD's rank-k factors. Body, grouped by
 * field like atomo-svd's:
 *   u32 k            factor columns, ≤ min(rows, cols)
 *   k·rows float32   P̂: column a at [a·rows, (a+1)·rows)
 *   k·cols float32   Q: column a at [a·cols, (a+1)·cols)
 * Body bytes: 4 + 4·k·(rows + cols). The estimate is Σₐ pₐ qₐᵀ.
 */
import type { PowerSgdSample } from '../atomo/types';
import { factoredCodec } from './factors';
import { powerSgdBodyBytes } from './sizes';

/** Encoder and decoder of PowerSGD factor pairs. */
export const powerSgdCodec = factoredCodec<PowerSgdSample, 'p' | 'q'>({
  scheme: 'powersgd',
  countField: 'rank',
  countText: (rank) => `rank ${rank}`,
  blocks: { p: ['rows', 'rank·rows'], q: ['cols', 'rank·cols'] },
  bodyBytes: powerSgdBodyBytes,
  countOf: (sample) => sample.rank,
  blocksOf: ({ p, q }) => ({ p, q }),
  sample: (shape, rank, { p, q }) => ({ scheme: 'powersgd', shape, rank, p, q }),
});
