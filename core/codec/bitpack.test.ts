import { describe, expect, it } from 'vitest';
import { BitReader, BitWriter, packedByteLength } from './bitpack';
import { CodecError } from './errors';
import { seededUint32 } from '../testing/seeded';

function pack(codes: number[], width: number): Uint8Array {
  const bytes = new Uint8Array(packedByteLength(codes.length, width));
  const writer = new BitWriter(bytes, 0);
  for (const code of codes) writer.write(code, width);
  expect(writer.finish()).toBe(bytes.length);
  return bytes;
}

function unpack(bytes: Uint8Array, count: number, width: number): number[] {
  const reader = new BitReader(bytes, 0);
  const codes = Array.from({ length: count }, () => reader.read(width));
  expect(reader.finish('test')).toBe(bytes.length);
  return codes;
}

describe('LSB-first bit packing', () => {
  it('puts entry 0 in the lowest bits of byte 0', () => {
    expect(Array.from(pack([1, 0, 0, 0, 0, 0, 0, 0], 1))).toEqual([0x01]);
    expect(Array.from(pack([0, 0, 0, 0, 0, 0, 0, 1], 1))).toEqual([0x80]);
    expect(Array.from(pack([0b01, 0b10, 0b00, 0b11], 2))).toEqual([0b11_00_10_01]);
    // 3-bit codes 5, 3, 7: bits 101 | 011 | 111 → stream (LSB first) 1,0,1,1,1,0,1,1,1
    expect(Array.from(pack([5, 3, 7], 3))).toEqual([0b11011101, 0b1]);
    // A 17-bit code straddles three bytes.
    expect(Array.from(pack([0x1abcd], 17))).toEqual([0xcd, 0xab, 0x01]);
  });

  it('round-trips random codes at every width 1..24 and odd counts', () => {
    const next = seededUint32(7);
    for (let width = 1; width <= 24; width++) {
      for (const count of [0, 1, 3, 7, 8, 9, 31, 100]) {
        const codes = Array.from({ length: count }, () => next() >>> (32 - width));
        expect(unpack(pack(codes, width), count, width)).toEqual(codes);
      }
    }
  });

  it('sizes the stream to whole bytes', () => {
    expect(packedByteLength(0, 5)).toBe(0);
    expect(packedByteLength(1, 1)).toBe(1);
    expect(packedByteLength(8, 1)).toBe(1);
    expect(packedByteLength(9, 1)).toBe(2);
    expect(packedByteLength(5, 2)).toBe(2);
    expect(packedByteLength(3, 17)).toBe(7);
  });

  it('rejects nonzero padding bits', () => {
    const reader = new BitReader(Uint8Array.of(0b0000_0101), 0);
    expect(reader.read(2)).toBe(1);
    expect(() => reader.finish('test')).toThrow(CodecError);
  });
});
