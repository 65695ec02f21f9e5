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
import { checkFiniteArray, checkLength } from './checks';
import type { ByteReader, ByteWriter } from './cursor';
import { CodecError } from './errors';
import { readFloat32Block, writeFloat32Block } from './floats';
import { shapeText, where, type Header } from './header';
import type { SchemeCodec } from './scheme';
import { spectralBodyBytes } from './sizes';

/** Encoder and decoder of spectral (rank-one atom) samples. */
export const spectralCodec: SchemeCodec<SpectralSample> = {
  bodyByteLength(sample: SpectralSample): number {
    const ctx = context(sample);
    const [rows, cols] = sample.shape;
    const k = sample.count;
    const maxAtoms = Math.min(rows, cols);
    if (!Number.isInteger(k) || k < 0 || k > maxAtoms) {
      throw new CodecError('count-out-of-range', `${ctx}: ${k} atoms, expected an integer in 0..${maxAtoms} = min(rows, cols)`);
    }
    checkLength(ctx, 'u', sample.u.length, k * rows, 'count·rows');
    checkLength(ctx, 'v', sample.v.length, k * cols, 'count·cols');
    checkLength(ctx, 'scales', sample.scales.length, k, 'one per atom');
    return spectralBodyBytes(k, sample.shape);
  },

  encodeBody(sample: SpectralSample, writer: ByteWriter): void {
    const ctx = context(sample);
    checkFiniteArray(ctx, 'u', sample.u);
    checkFiniteArray(ctx, 'v', sample.v);
    checkFiniteArray(ctx, 'scales', sample.scales);
    writer.u32(sample.count);
    writeFloat32Block(writer, sample.u);
    writeFloat32Block(writer, sample.v);
    writeFloat32Block(writer, sample.scales);
  },

  decodeBody(reader: ByteReader, header: Header): SpectralSample {
    const ctx = where(header);
    const { rows, cols } = header;
    reader.need(4, 'atom count');
    const count = reader.u32();
    const maxAtoms = Math.min(rows, cols);
    if (count > maxAtoms) {
      throw new CodecError('count-out-of-range', `${ctx}: ${count} atoms, more than min(rows, cols) = ${maxAtoms}`);
    }
    reader.need(4 * count * (rows + cols + 1), `${count} atoms of ${rows + cols + 1} float32 each`);
    const u = readFloat32Block(reader, count * rows);
    const v = readFloat32Block(reader, count * cols);
    const scales = readFloat32Block(reader, count);
    checkFiniteArray(ctx, 'u', u);
    checkFiniteArray(ctx, 'v', v);
    checkFiniteArray(ctx, 'scales', scales);
    return { scheme: 'atomo-svd', shape: [rows, cols], count, u, v, scales };
  },
};

function context(sample: SpectralSample): string {
  return `atomo-svd (${shapeText(sample.shape[0], sample.shape[1])})`;
}
