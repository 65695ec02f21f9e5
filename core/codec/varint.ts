/**
 * Unsigned LEB128 for values in 0..2³²−1: seven bits per byte, least
 * significant group first, high bit set on every byte but the last. At most
 * five bytes. Only the canonical (shortest) form is accepted, so a decoded
 * message re-encodes to the same bytes.
 */
import type { ByteReader, ByteWriter } from './cursor';
import { CodecError } from './errors';

/** Largest value a varint may carry. */
export const MAX_VARINT = 0xffffffff;

/** Number of bytes the LEB128 encoding of `value` (0..2³²−1) takes. */
export function varintLength(value: number): number {
  if (value < 0x80) return 1;
  if (value < 0x4000) return 2;
  if (value < 0x200000) return 3;
  if (value < 0x10000000) return 4;
  return 5;
}

/** Appends the LEB128 encoding of `value` (an integer in 0..2³²−1). */
export function writeVarint(writer: ByteWriter, value: number): void {
  const bytes = writer.bytes;
  let pos = writer.pos;
  let rest = value;
  // Division instead of >>> 7 keeps values ≥ 2³¹ exact.
  while (rest >= 0x80) {
    bytes[pos++] = (rest & 0x7f) | 0x80;
    rest = Math.floor(rest / 128);
  }
  bytes[pos++] = rest;
  writer.pos = pos;
}

/**
 * Reads one LEB128 value. Throws 'truncated' if the input ends inside it and
 * 'bad-varint' if it is overlong or does not fit in 32 bits; `what` names
 * the field for the message.
 */
export function readVarint(reader: ByteReader, what: string): number {
  const bytes = reader.bytes;
  const start = reader.pos;
  let value = 0;
  let scale = 1; // 128^i, kept as a number so the fifth group does not overflow int32
  for (let i = 0; i < 5; i++) {
    const at = start + i;
    if (at >= bytes.length) {
      throw new CodecError('truncated', `truncated: ${what} varint at offset ${start} runs past the end of the input`);
    }
    const byte = bytes[at]!;
    const group = byte & 0x7f;
    if (i === 4 && byte > 0x0f) {
      throw new CodecError('bad-varint', `${what}: varint at offset ${start} does not fit in 32 bits`);
    }
    value += group * scale;
    if ((byte & 0x80) === 0) {
      if (byte === 0 && i > 0) {
        throw new CodecError(
          'bad-varint',
          `${what}: overlong varint at offset ${start} (${i + 1} bytes, trailing zero group)`,
        );
      }
      reader.pos = at + 1;
      return value;
    }
    scale *= 128;
  }
  // Unreachable: the fifth byte either ends the varint or fails the 0x0f test.
  throw new CodecError('bad-varint', `${what}: varint at offset ${start} is longer than 5 bytes`);
}
