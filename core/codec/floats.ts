/**
 * Bulk float32 transfer between typed arrays and the little-endian wire.
 * On a little-endian host (every browser and Node target we know of) the
 * wire bytes are the memory bytes, so a block is one memcpy at any byte
 * offset; elsewhere a DataView loop swaps each value. Both paths are tested
 * to agree.
 */
import type { ByteReader, ByteWriter } from './cursor';

/** True when the host stores a float32 in little-endian byte order. */
export const HOST_IS_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Copies `source` to the writer as float32 LE. */
export function writeFloat32Block(
  writer: ByteWriter,
  source: Float32Array,
  littleEndianHost = HOST_IS_LITTLE_ENDIAN,
): void {
  const at = writer.pos;
  if (littleEndianHost) {
    writer.bytes.set(new Uint8Array(source.buffer, source.byteOffset, source.byteLength), at);
  } else {
    const view = new DataView(writer.bytes.buffer, writer.bytes.byteOffset + at, source.length * 4);
    for (let i = 0; i < source.length; i++) view.setFloat32(i * 4, source[i]!, true);
  }
  writer.pos = at + source.length * 4;
}

/** Reads `count` float32 LE into a fresh array; the caller has checked that the bytes are there. */
export function readFloat32Block(
  reader: ByteReader,
  count: number,
  littleEndianHost = HOST_IS_LITTLE_ENDIAN,
): Float32Array {
  const at = reader.pos;
  const out = new Float32Array(count);
  if (littleEndianHost) {
    // Copy rather than view: the input may be unaligned, and the caller may reuse its buffer.
    new Uint8Array(out.buffer).set(reader.bytes.subarray(at, at + count * 4));
  } else {
    const view = new DataView(reader.bytes.buffer, reader.bytes.byteOffset + at, count * 4);
    for (let i = 0; i < count; i++) out[i] = view.getFloat32(i * 4, true);
  }
  reader.pos = at + count * 4;
  return out;
}

/** Index of the first NaN or ±Infinity in `values`, or −1 if all are finite. */
export function firstNonFinite(values: Float32Array): number {
  for (let i = 0; i < values.length; i++) {
    const x = values[i]!;
    // x − x is 0 for every finite x and NaN for NaN and ±Infinity.
    if (x - x !== 0) return i;
  }
  return -1;
}
