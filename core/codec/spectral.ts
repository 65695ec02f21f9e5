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
import { checkLength } from './checks';
import type { ByteReader, ByteWriter } from './cursor';
import { checkFactorCount, readFactorCount, readFiniteBlocks, writeFactors } from './factors';
import { shapeText, where, type Header } from './header';
import type { SchemeCodec } from './scheme';
import { spectralBodyBytes } from './sizes';

/** Encoder and decoder of spectral (rank-one atom) samples. */
export const spectralCodec: SchemeCodec<SpectralSample> = {
  bodyByteLength(sample: SpectralSample): number {
    const ctx = context(sample);
    const [rows, cols] = sample.shape;
    const k = sample.count;
    checkFactorCount(ctx, k, rows, cols, atoms);
    checkLength(ctx, 'u', sample.u.length, k * rows, 'count·rows');
    checkLength(ctx, 'v', sample.v.length, k * cols, 'count·cols');
    checkLength(ctx, 'scales', sample.scales.length, k, 'one per atom');
    return spectralBodyBytes(k, sample.shape);
  },

  encodeBody(sample: SpectralSample, writer: ByteWriter): void {
    writeFactors(writer, context(sample), sample.count, { u: sample.u, v: sample.v, scales: sample.scales });
  },

  decodeBody(reader: ByteReader, header: Header): SpectralSample {
    const ctx = where(header);
    const { rows, cols } = header;
    const count = readFactorCount(reader, ctx, rows, cols, 'atom count', atoms);
    reader.need(4 * count * (rows + cols + 1), `${count} atoms of ${rows + cols + 1} float32 each`);
    const { u, v, scales } = readFiniteBlocks(reader, ctx, { u: count * rows, v: count * cols, scales: count });
    return { scheme: 'atomo-svd', shape: [rows, cols], count, u, v, scales };
  },
};

const atoms = (count: number): string => `${count} atoms`;

function context(sample: SpectralSample): string {
  return `atomo-svd (${shapeText(sample.shape[0], sample.shape[1])})`;
}
