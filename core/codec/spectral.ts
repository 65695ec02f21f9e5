/**
 * Scheme `atomo-svd` (id 2), spectral ATOMO. Body, grouped by field so each
 * block is one contiguous copy of the sample's arrays:
 *   u32 k            atoms kept, ≤ min(rows, cols)
 *   k·rows float32   U: atom i's left vector at [i·rows, (i+1)·rows)
 *   k·cols float32   V: atom i's right vector at [i·cols, (i+1)·cols)
 *   k float32        σᵢ/pᵢ
 * Body bytes: 4 + 4·k·(rows + cols + 1). Every float sits at a multiple of 4
 * from the start of the message.
 */
import type { SpectralSample } from '../atomo/types';
import { factoredCodec } from './factors';
import { spectralBodyBytes } from './sizes';

/** Encoder and decoder of spectral (rank-one atom) samples. */
export const spectralCodec = factoredCodec<SpectralSample, 'u' | 'v' | 'scales'>({
  scheme: 'atomo-svd',
  countField: 'atom count',
  countText: (count) => `${count} atoms`,
  blocks: { u: ['rows', 'count·rows'], v: ['cols', 'count·cols'], scales: ['one', 'one per atom'] },
  bodyBytes: spectralBodyBytes,
  countOf: (sample) => sample.count,
  blocksOf: ({ u, v, scales }) => ({ u, v, scales }),
  sample: (shape, count, { u, v, scales }) => ({ scheme: 'atomo-svd', shape, count, u, v, scales }),
});
