/**
 * Sequential little-endian readers and writers over a Uint8Array. The reader
 * bounds-checks through need(), so every short input becomes a 'truncated'
 * CodecError instead of a RangeError from DataView.
 */
import { CodecError } from './errors';

/** A position in a byte array, moved forward by each field read or written. */
abstract class Cursor {
  readonly bytes: Uint8Array;
  protected readonly view: DataView;
  /** Offset of the next byte to read or write. */
  pos = 0;

  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** Moves past the next `size` bytes; returns the offset they start at. */
  protected advance(size: number): number {
    const at = this.pos;
    this.pos += size;
    return at;
  }
}

/** Reads fields in order from an encoded layer. */
export class ByteReader extends Cursor {
  /** Bytes not yet read. */
  get remaining(): number {
    return this.bytes.length - this.pos;
  }

  /** Throws 'truncated' unless `count` more bytes are available; `what` names them. */
  need(count: number, what: string): void {
    if (count > this.remaining) {
      throw new CodecError(
        'truncated',
        `truncated: need ${count} bytes of ${what} at offset ${this.pos}, got ${this.remaining}`,
      );
    }
  }

  /** The next byte without consuming it (caller checked remaining ≥ 1). */
  peekU8(): number {
    return this.bytes[this.pos]!;
  }

  // The fixed-size reads below rely on the caller's need(); DataView would
  // throw a RangeError otherwise, which is a codec bug, not bad input.

  /** Reads a u8. */
  u8(): number {
    return this.view.getUint8(this.advance(1));
  }

  /** Reads a little-endian u16. */
  u16(): number {
    return this.view.getUint16(this.advance(2), true);
  }

  /** Reads a little-endian u32. */
  u32(): number {
    return this.view.getUint32(this.advance(4), true);
  }

  /** Reads a little-endian float32. */
  f32(): number {
    return this.view.getFloat32(this.advance(4), true);
  }
}

/** Writes fields in order into a buffer sized exactly by encodedByteLength. */
export class ByteWriter extends Cursor {
  constructor(length: number) {
    super(new Uint8Array(length));
  }

  /** Writes a u8. */
  u8(value: number): void {
    this.view.setUint8(this.advance(1), value);
  }

  /** Writes a little-endian u16. */
  u16(value: number): void {
    this.view.setUint16(this.advance(2), value, true);
  }

  /** Writes a little-endian u32. */
  u32(value: number): void {
    this.view.setUint32(this.advance(4), value, true);
  }

  /** Writes a little-endian float32 (value rounded to float32). */
  f32(value: number): void {
    this.view.setFloat32(this.advance(4), value, true);
  }
}
