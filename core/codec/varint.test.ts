import { describe, expect, it } from 'vitest';
import { ByteReader, ByteWriter } from './cursor';
import { CodecError } from './errors';
import { seededUint32 } from '../testing/seeded';
import { readVarint, varintLength, writeVarint } from './varint';

function encode(value: number): Uint8Array {
  const writer = new ByteWriter(varintLength(value));
  writeVarint(writer, value);
  expect(writer.pos).toBe(writer.bytes.length);
  return writer.bytes;
}

function decode(bytes: number[]): number {
  const reader = new ByteReader(Uint8Array.from(bytes));
  const value = readVarint(reader, 'test');
  expect(reader.pos).toBe(bytes.length);
  return value;
}

function codeOf(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    return error instanceof CodecError ? error.code : `not a CodecError: ${String(error)}`;
  }
  return 'no error';
}

describe('LEB128 varint', () => {
  it('encodes known values', () => {
    expect(Array.from(encode(0))).toEqual([0x00]);
    expect(Array.from(encode(127))).toEqual([0x7f]);
    expect(Array.from(encode(128))).toEqual([0x80, 0x01]);
    expect(Array.from(encode(300))).toEqual([0xac, 0x02]);
    expect(Array.from(encode(16384))).toEqual([0x80, 0x80, 0x01]);
    expect(Array.from(encode(0xffffffff))).toEqual([0xff, 0xff, 0xff, 0xff, 0x0f]);
    expect(Array.from(encode(0x80000000))).toEqual([0x80, 0x80, 0x80, 0x80, 0x08]);
  });

  it('has lengths 1..5 switching at 2^7, 2^14, 2^21, 2^28', () => {
    const edges = [0, 2 ** 7, 2 ** 14, 2 ** 21, 2 ** 28];
    edges.forEach((edge, i) => {
      expect(varintLength(edge)).toBe(i + 1);
      if (edge > 0) expect(varintLength(edge - 1)).toBe(i);
    });
    expect(varintLength(0xffffffff)).toBe(5);
  });

  it('round-trips edge and random values', () => {
    const values = [
      0,
      1,
      127,
      128,
      16383,
      16384,
      2 ** 21 - 1,
      2 ** 21,
      2 ** 28 - 1,
      2 ** 28,
      2 ** 31 - 1,
      2 ** 31,
      0xffffffff,
    ];
    const next = seededUint32(99);
    for (let i = 0; i < 500; i++) values.push(next() >>> (i % 32));
    for (const value of values) expect(decode(Array.from(encode(value)))).toBe(value);
  });

  it('rejects overlong encodings with a trailing zero group', () => {
    expect(codeOf(() => decode([0x80, 0x00]))).toBe('bad-varint');
    expect(codeOf(() => decode([0x81, 0x80, 0x00]))).toBe('bad-varint');
    expect(codeOf(() => decode([0xff, 0xff, 0xff, 0xff, 0x00]))).toBe('bad-varint');
  });

  it('rejects values past 32 bits and encodings longer than 5 bytes', () => {
    expect(codeOf(() => decode([0xff, 0xff, 0xff, 0xff, 0x10]))).toBe('bad-varint');
    expect(codeOf(() => decode([0x80, 0x80, 0x80, 0x80, 0x80, 0x01]))).toBe('bad-varint');
  });

  it('reports truncation when the input ends inside a varint', () => {
    expect(codeOf(() => decode([0x80]))).toBe('truncated');
    expect(codeOf(() => decode([]))).toBe('truncated');
  });
});
