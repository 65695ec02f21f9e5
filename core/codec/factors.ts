/**
 * The codec atomo-svd's and PowerSGD's bodies share: a u32 count k of
 * rank-one factors bounded by min(rows, cols), then float32 blocks whose
 * lengths follow from k, rows and cols, finite both ways. Each scheme names
 * its count and blocks (FactoredBody); the reading, writing and checking
 * are written once here.
 */
import type { LayerSample, Shape } from '../atomo/types';
import { checkFiniteArray, checkLength } from './checks';
import type { ByteReader, ByteWriter } from './cursor';
import { CodecError } from './errors';
import { readFloat32Block, writeFloat32Block } from './floats';
import { shapeText, where, type Header } from './header';
import type { SchemeCodec } from './scheme';

/** How many floats one block holds per factor: a vector of the layer's rows, of its columns, or one value. */
type PerFactor = 'rows' | 'cols' | 'one';

/** One factored scheme's body: its count, its blocks in wire order, and how its samples hold them. */
export interface FactoredBody<S extends LayerSample, K extends string> {
  readonly scheme: S['scheme'];
  /** The count's field, as a short input names it: `rank`, `atom count`. */
  readonly countField: string;
  /** How a count reads in an error: `rank 4`, `4 atoms`. */
  readonly countText: (count: number) => string;
  /** Each block in wire order: floats per factor, and why that length, as a length error says it. */
  readonly blocks: Readonly<Record<K, readonly [PerFactor, string]>>;
  /** Exact body bytes for `count` factors (sizes.ts, the formulas of docs/wire-format.md). */
  readonly bodyBytes: (count: number, shape: Shape) => number;
  readonly countOf: (sample: S) => number;
  readonly blocksOf: (sample: S) => Readonly<Record<K, Float32Array>>;
  readonly sample: (shape: Shape, count: number, blocks: Record<K, Float32Array>) => S;
}

/** Encoder and decoder of a factored body. */
export function factoredCodec<S extends LayerSample, K extends string>(body: FactoredBody<S, K>): SchemeCodec<S> {
  const names = Object.keys(body.blocks) as K[];
  const lengths = (count: number, rows: number, cols: number): Record<K, number> => {
    const perFactor = { rows, cols, one: 1 };
    const out = {} as Record<K, number>;
    for (const name of names) out[name] = count * perFactor[body.blocks[name][0]];
    return out;
  };
  const context = (sample: S): string => `${body.scheme} (${shapeText(sample.shape[0], sample.shape[1])})`;
  return {
    bodyByteLength(sample: S): number {
      const ctx = context(sample);
      const [rows, cols] = sample.shape;
      const count = body.countOf(sample);
      checkFactorCount(ctx, count, rows, cols, body.countText);
      const blocks = body.blocksOf(sample);
      const expected = lengths(count, rows, cols);
      for (const name of names) checkLength(ctx, name, blocks[name].length, expected[name], body.blocks[name][1]);
      return body.bodyBytes(count, sample.shape);
    },

    // Every block is checked finite before the first byte is written.
    encodeBody(sample: S, writer: ByteWriter): void {
      const ctx = context(sample);
      const blocks = body.blocksOf(sample);
      for (const name of names) checkFiniteArray(ctx, name, blocks[name]);
      writer.u32(body.countOf(sample));
      for (const name of names) writeFloat32Block(writer, blocks[name]);
    },

    // The blocks' bytes are checked present before any block is allocated.
    decodeBody(reader: ByteReader, header: Header): S {
      const ctx = where(header);
      const { rows, cols } = header;
      const count = readFactorCount(reader, ctx, rows, cols, body.countField, body.countText);
      const expected = lengths(count, rows, cols);
      reader.need(body.bodyBytes(count, [rows, cols]) - 4, `${names.join(', ')} of ${body.countText(count)}`);
      const blocks = {} as Record<K, Float32Array>;
      for (const name of names) blocks[name] = readFloat32Block(reader, expected[name]);
      for (const name of names) checkFiniteArray(ctx, name, blocks[name]);
      return body.sample([rows, cols], count, blocks);
    },
  };
}

/** Refuses a sample whose factor count is not an integer in 0..min(rows, cols). */
function checkFactorCount(
  ctx: string,
  count: number,
  rows: number,
  cols: number,
  text: (count: number) => string,
): void {
  const max = Math.min(rows, cols);
  if (!Number.isInteger(count) || count < 0 || count > max) {
    throw new CodecError(
      'count-out-of-range',
      `${ctx}: ${text(count)}, expected an integer in 0..${max} = min(rows, cols)`,
    );
  }
}

/** Reads the u32 factor count and refuses one above min(rows, cols). */
function readFactorCount(
  reader: ByteReader,
  ctx: string,
  rows: number,
  cols: number,
  field: string,
  text: (count: number) => string,
): number {
  reader.need(4, field);
  const count = reader.u32();
  const max = Math.min(rows, cols);
  if (count > max)
    throw new CodecError('count-out-of-range', `${ctx}: ${text(count)}, more than min(rows, cols) = ${max}`);
  return count;
}
