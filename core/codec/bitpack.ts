/**
 * Fixed-width bit packing, LSB-first: entry i of width w occupies stream
 * bits [i·w, (i+1)·w), and stream bit j is bit (j mod 8) of byte ⌊j/8⌋.
 * The stream is padded with zero bits to a whole byte. Widths are 1..24 so
 * a 32-bit accumulator never loses a bit.
 */
import { CodecError } from './errors';

/** Bytes taken by `count` entries of `width` bits, padding included. */
export function packedByteLength(count: number, width: number): number {
  return Math.ceil((count * width) / 8);
}

/** Streams fixed-width codes into a byte array. */
export class BitWriter {
  private readonly bytes: Uint8Array;
  private pos: number;
  private acc = 0; // pending bits, low bits first
  private bits = 0; // how many bits of acc are pending (< 8 between calls)

  constructor(bytes: Uint8Array, offset: number) {
    this.bytes = bytes;
    this.pos = offset;
  }

  /** Appends the low `width` bits of `code` (the caller keeps code < 2^width). */
  write(code: number, width: number): void {
    this.acc |= code << this.bits;
    this.bits += width;
    while (this.bits >= 8) {
      this.bytes[this.pos++] = this.acc & 0xff;
      this.acc >>>= 8;
      this.bits -= 8;
    }
  }

  /** Flushes the last partial byte (zero padded); returns the offset after the stream. */
  finish(): number {
    if (this.bits > 0) {
      this.bytes[this.pos++] = this.acc & 0xff;
      this.acc = 0;
      this.bits = 0;
    }
    return this.pos;
  }
}

/** Streams fixed-width codes out of a byte array; the caller has checked the length. */
export class BitReader {
  private readonly bytes: Uint8Array;
  private pos: number;
  private acc = 0;
  private bits = 0;

  constructor(bytes: Uint8Array, offset: number) {
    this.bytes = bytes;
    this.pos = offset;
  }

  /** Reads the next `width`-bit code. */
  read(width: number): number {
    // Load only the bytes needed, so the reader never touches a byte past
    // ⌈total bits / 8⌉ and the leftover bits are exactly the padding.
    while (this.bits < width) {
      this.acc |= this.bytes[this.pos++]! << this.bits;
      this.bits += 8;
    }
    const code = this.acc & ((1 << width) - 1);
    this.acc >>>= width;
    this.bits -= width;
    return code;
  }

  /** Checks that the padding bits are zero; returns the offset after the stream. `what` names the stream. */
  finish(what: string): number {
    if (this.acc !== 0) {
      throw new CodecError(
        'nonzero-padding',
        `${what}: padding bits after the last entry are not zero (byte at offset ${this.pos - 1})`,
      );
    }
    return this.pos;
  }
}
