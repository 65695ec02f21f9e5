/**
 * The pieces atomo-svd's and PowerSGD's bodies share: a u32 count of rank-one
 * factors bounded by min(rows, cols), then blocks of float32 that must be
 * finite both ways.
 */
import { checkFiniteArray } from './checks';
import type { ByteReader, ByteWriter } from './cursor';
import { CodecError } from './errors';
import { readFloat32Block, writeFloat32Block } from './floats';

/** How a count reads in an error: `4 atoms`, `rank 4`. */
export type CountText = (count: number) => string;

/** Refuses a sample whose factor count is not an integer in 0..min(rows, cols). */
export function checkFactorCount(ctx: string, count: number, rows: number, cols: number, text: CountText): void {
  const max = Math.min(rows, cols);
  if (!Number.isInteger(count) || count < 0 || count > max) {
    throw new CodecError('count-out-of-range', `${ctx}: ${text(count)}, expected an integer in 0..${max} = min(rows, cols)`);
  }
}

/** Reads the u32 factor count and refuses one above min(rows, cols). */
export function readFactorCount(reader: ByteReader, ctx: string, rows: number, cols: number, field: string, text: CountText): number {
  reader.need(4, field);
  const count = reader.u32();
  const max = Math.min(rows, cols);
  if (count > max) throw new CodecError('count-out-of-range', `${ctx}: ${text(count)}, more than min(rows, cols) = ${max}`);
  return count;
}

/** Writes the u32 factor count and then the named float32 blocks, once every block is known to be finite. */
export function writeFactors(writer: ByteWriter, ctx: string, count: number, blocks: Readonly<Record<string, Float32Array>>): void {
  for (const [name, values] of Object.entries(blocks)) checkFiniteArray(ctx, name, values);
  writer.u32(count);
  for (const values of Object.values(blocks)) writeFloat32Block(writer, values);
}

/** Reads float32 blocks of the given lengths, in order, and refuses any non-finite value. */
export function readFiniteBlocks<K extends string>(reader: ByteReader, ctx: string, lengths: Readonly<Record<K, number>>): Record<K, Float32Array> {
  const blocks = {} as Record<K, Float32Array>;
  for (const name of Object.keys(lengths) as K[]) blocks[name] = readFloat32Block(reader, lengths[name]);
  for (const name of Object.keys(lengths) as K[]) checkFiniteArray(ctx, name, blocks[name]);
  return blocks;
}
