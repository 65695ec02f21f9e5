/**
 * Elias-γ codes in an LSB-first bit stream (the packing of bitpack.ts: stream
 * bit j is bit j mod 8 of byte ⌊j/8⌋), as QSGD's Elias coding writes its gaps
 * and levels (docs/wire-format.md, `qsgd-elias`). γ(v) of v ≥ 1 with L bits
 * (2^(L−1) ≤ v < 2^L) is L − 1 zero bits, then v's L bits from the most
 * significant down: γ(1) = 1, γ(2) = 010, γ(3) = 011, γ(4) = 00100. It takes
 * 2⌊log2 v⌋ + 1 bits, and every bit string has at most one reading.
 */
import { BitWriter } from './bitpack';
import { CodecError } from './errors';

/**
 * Most leading zeros accepted: γ of a value below 2³¹. Every field a γ code carries (a count + 1 ≤ 2³⁰ + 1, a gap
 * ≤ 2³⁰, a level ≤ 65535) fits.
 */
const MAX_ZEROS = 30;

/** Bits of γ(value), value an integer in 1..2³¹ − 1. */
export function gammaBits(value: number): number {
  return 2 * (31 - Math.clz32(value)) + 1;
}

/** Streams single bits and γ codes into a byte array sized by the caller: bitpack.ts's writer, one bit at a time. */
export class GammaWriter extends BitWriter {
  /** Appends one bit (0 or 1). */
  bit(bit: number): void {
    this.write(bit, 1);
  }

  /** Appends γ(value), value an integer in 1..2³¹ − 1. */
  gamma(value: number): void {
    const top = 31 - Math.clz32(value);
    for (let i = 0; i < top; i++) this.bit(0);
    for (let i = top; i >= 0; i--) this.bit((value >>> i) & 1);
  }
}

/**
 * Reads bits and γ codes up to the end of the byte array: a read past it is 'truncated', a γ code with more than 30
 * leading zeros 'bad-elias', so no input makes it loop longer than its bits.
 */
export class GammaReader {
  private readonly bytes: Uint8Array;
  private pos: number;
  private readonly what: string;
  private byte = 0; // the unread bits of the current byte, low bit next
  private bits = 0; // how many of them

  /** `what` names the stream in error messages. */
  constructor(bytes: Uint8Array, offset: number, what: string) {
    this.bytes = bytes;
    this.pos = offset;
    this.what = what;
  }

  /** The next bit. */
  bit(): number {
    if (this.bits === 0) {
      if (this.pos >= this.bytes.length) {
        throw new CodecError(
          'truncated',
          `truncated: ${this.what} needs more bits at offset ${this.pos}, the input ends there`,
        );
      }
      this.byte = this.bytes[this.pos++]!;
      this.bits = 8;
    }
    const bit = this.byte & 1;
    this.byte >>>= 1;
    this.bits--;
    return bit;
  }

  /** The next γ code's value (≥ 1); `field` names it in error messages. */
  gamma(field: string): number {
    let zeros = 0;
    while (this.bit() === 0) {
      if (++zeros > MAX_ZEROS) {
        const at = `byte at offset ${this.pos - 1}`;
        throw new CodecError(
          'bad-elias',
          `${this.what}: the Elias-γ code of ${field} has more than ${MAX_ZEROS} leading zeros (${at})`,
        );
      }
    }
    let value = 1;
    for (let i = 0; i < zeros; i++) value = (value << 1) | this.bit();
    return value >>> 0;
  }

  /** Checks that the rest of the current byte (the padding) is zero; returns the offset after the stream. */
  finish(): number {
    if (this.byte !== 0) {
      throw new CodecError(
        'nonzero-padding',
        `${this.what}: padding bits after the last code are not zero (byte at offset ${this.pos - 1})`,
      );
    }
    return this.pos;
  }
}
