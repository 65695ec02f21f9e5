/**
 * Sequential little-endian readers and writers over a Uint8Array. The reader
 * bounds-checks through need(), so every short input becomes a 'truncated'
 * CodecError instead of a RangeError from DataView.
 */
import { CodecError } from './errors';

/** Reads fields in order from an encoded layer. */
export class ByteReader {
  readonly bytes: Uint8Array;
  private readonly view: DataView;
  /** Offset of the next unread byte. */
  pos = 0;

  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** Bytes not yet read. */
  get remaining(): number {
    return this.bytes.length - this.pos;
  }

  /** Throws 'truncated' unless `count` more bytes are available; `what` names them. */
  need(count: number, what: string): void {
    if (count > this.remaining) {
      throw new CodecError('truncated', `truncated: need ${count} bytes of ${what} at offset ${this.pos}, got ${this.remaining}`);
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
    const value = this.view.getUint8(this.pos);
    this.pos += 1;
    return value;
  }

  /** Reads a little-endian u16. */
  u16(): number {
    const value = this.view.getUint16(this.pos, true);
    this.pos += 2;
    return value;
  }

  /** Reads a little-endian u32. */
  u32(): number {
    const value = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return value;
  }

  /** Reads a little-endian float32. */
  f32(): number {
    const value = this.view.getFloat32(this.pos, true);
    this.pos += 4;
    return value;
  }
}

/** Writes fields in order into a buffer sized exactly by encodedByteLength. */
export class ByteWriter {
  readonly bytes: Uint8Array;
  private readonly view: DataView;
  /** Offset of the next byte to write. */
  pos = 0;

  constructor(length: number) {
    this.bytes = new Uint8Array(length);
    this.view = new DataView(this.bytes.buffer);
  }

  /** Writes a u8. */
  u8(value: number): void {
    this.view.setUint8(this.pos, value);
    this.pos += 1;
  }

  /** Writes a little-endian u16. */
  u16(value: number): void {
    this.view.setUint16(this.pos, value, true);
    this.pos += 2;
  }

  /** Writes a little-endian u32. */
  u32(value: number): void {
    this.view.setUint32(this.pos, value, true);
    this.pos += 4;
  }

  /** Writes a little-endian float32 (value rounded to float32). */
  f32(value: number): void {
    this.view.setFloat32(this.pos, value, true);
    this.pos += 4;
  }
}
