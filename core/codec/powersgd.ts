/**
 * Scheme `powersgd` (id 6), PowerSGD's rank-k factors. Body, grouped by
 * field like atomo-svd's:
 *   u32 k            factor columns, ≤ min(rows, cols)
 *   k·rows float32   P̂: column a at [a·rows, (a+1)·rows)
 *   k·cols float32   Q: column a at [a·cols, (a+1)·cols)
 * Body bytes: 4 + 4·k·(rows + cols). The estimate is Σₐ pₐ qₐᵀ.
 */
import type { PowerSgdSample } from '../atomo/types';
import { checkFiniteArray, checkLength } from './checks';
import type { ByteReader, ByteWriter } from './cursor';
import { CodecError } from './errors';
import { readFloat32Block, writeFloat32Block } from './floats';
import { shapeText, where, type Header } from './header';
import type { SchemeCodec } from './scheme';
import { powerSgdBodyBytes } from './sizes';

/** Encoder and decoder of PowerSGD factor pairs. */
export const powerSgdCodec: SchemeCodec<PowerSgdSample> = {
  bodyByteLength(sample: PowerSgdSample): number {
    const ctx = context(sample);
    const [rows, cols] = sample.shape;
    const k = sample.rank;
    const maxRank = Math.min(rows, cols);
    if (!Number.isInteger(k) || k < 0 || k > maxRank) {
      throw new CodecError('count-out-of-range', `${ctx}: rank ${k}, expected an integer in 0..${maxRank} = min(rows, cols)`);
    }
    checkLength(ctx, 'p', sample.p.length, k * rows, 'rank·rows');
    checkLength(ctx, 'q', sample.q.length, k * cols, 'rank·cols');
    return powerSgdBodyBytes(k, sample.shape);
  },

  encodeBody(sample: PowerSgdSample, writer: ByteWriter): void {
    const ctx = context(sample);
    checkFiniteArray(ctx, 'p', sample.p);
    checkFiniteArray(ctx, 'q', sample.q);
    writer.u32(sample.rank);
    writeFloat32Block(writer, sample.p);
    writeFloat32Block(writer, sample.q);
  },

  decodeBody(reader: ByteReader, header: Header): PowerSgdSample {
    const ctx = where(header);
    const { rows, cols } = header;
    reader.need(4, 'rank');
    const rank = reader.u32();
    const maxRank = Math.min(rows, cols);
    if (rank > maxRank) {
      throw new CodecError('count-out-of-range', `${ctx}: rank ${rank}, more than min(rows, cols) = ${maxRank}`);
    }
    reader.need(4 * rank * (rows + cols), `rank ${rank} factors of ${rows} + ${cols} float32`);
    const p = readFloat32Block(reader, rank * rows);
    const q = readFloat32Block(reader, rank * cols);
    checkFiniteArray(ctx, 'p', p);
    checkFiniteArray(ctx, 'q', q);
    return { scheme: 'powersgd', shape: [rows, cols], rank, p, q };
  },
};

function context(sample: PowerSgdSample): string {
  return `powersgd (${shapeText(sample.shape[0], sample.shape[1])})`;
}
