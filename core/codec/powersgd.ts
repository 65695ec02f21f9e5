/**
 * Scheme `powersgd` (id 6), PowerSGD's rank-k factors. Body, grouped by
 * field like atomo-svd's:
 *   u32 k            factor columns, ≤ min(rows, cols)
 *   k·rows float32   P̂: column a at [a·rows, (a+1)·rows)
 *   k·cols float32   Q: column a at [a·cols, (a+1)·cols)
 * Body bytes: 4 + 4·k·(rows + cols). The estimate is Σₐ pₐ qₐᵀ.
 */
import type { PowerSgdSample } from '../atomo/types';
import { checkLength } from './checks';
import type { ByteReader, ByteWriter } from './cursor';
import { checkFactorCount, readFactorCount, readFiniteBlocks, writeFactors } from './factors';
import { shapeText, where, type Header } from './header';
import type { SchemeCodec } from './scheme';
import { powerSgdBodyBytes } from './sizes';

/** Encoder and decoder of PowerSGD factor pairs. */
export const powerSgdCodec: SchemeCodec<PowerSgdSample> = {
  bodyByteLength(sample: PowerSgdSample): number {
    const ctx = context(sample);
    const [rows, cols] = sample.shape;
    const k = sample.rank;
    checkFactorCount(ctx, k, rows, cols, rankText);
    checkLength(ctx, 'p', sample.p.length, k * rows, 'rank·rows');
    checkLength(ctx, 'q', sample.q.length, k * cols, 'rank·cols');
    return powerSgdBodyBytes(k, sample.shape);
  },

  encodeBody(sample: PowerSgdSample, writer: ByteWriter): void {
    writeFactors(writer, context(sample), sample.rank, { p: sample.p, q: sample.q });
  },

  decodeBody(reader: ByteReader, header: Header): PowerSgdSample {
    const ctx = where(header);
    const { rows, cols } = header;
    const rank = readFactorCount(reader, ctx, rows, cols, 'rank', rankText);
    reader.need(4 * rank * (rows + cols), `rank ${rank} factors of ${rows} + ${cols} float32`);
    const { p, q } = readFiniteBlocks(reader, ctx, { p: rank * rows, q: rank * cols });
    return { scheme: 'powersgd', shape: [rows, cols], rank, p, q };
  },
};

const rankText = (rank: number): string => `rank ${rank}`;

function context(sample: PowerSgdSample): string {
  return `powersgd (${shapeText(sample.shape[0], sample.shape[1])})`;
}
