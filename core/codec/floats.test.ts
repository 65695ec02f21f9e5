import { describe, expect, it } from 'vitest';
import { ByteReader, ByteWriter } from './cursor';
import { firstNonFinite, HOST_IS_LITTLE_ENDIAN, readFloat32Block, writeFloat32Block } from './floats';
import { seededRng } from '../testing/seeded';
import { randomFloats, toHex } from './testing/random-samples';

describe('float32 blocks', () => {
  it('the memcpy path and the DataView path write and read the same bytes', () => {
    const rng = seededRng(11);
    for (const count of [0, 1, 5, 64]) {
      const values = randomFloats(rng, count);
      const viaCopy = new ByteWriter(3 + 4 * count);
      const viaView = new ByteWriter(3 + 4 * count);
      // Start at an odd offset: the wire gives no alignment.
      viaCopy.pos = 3;
      viaView.pos = 3;
      writeFloat32Block(viaCopy, values, true);
      writeFloat32Block(viaView, values, false);
      expect(toHex(viaCopy.bytes)).toBe(toHex(viaView.bytes));

      const a = new ByteReader(viaCopy.bytes);
      const b = new ByteReader(viaCopy.bytes);
      a.pos = 3;
      b.pos = 3;
      const copied = readFloat32Block(a, count, true);
      const viewed = readFloat32Block(b, count, false);
      expect(toHex(new Uint8Array(copied.buffer))).toBe(toHex(new Uint8Array(values.buffer)));
      expect(toHex(new Uint8Array(viewed.buffer))).toBe(toHex(new Uint8Array(values.buffer)));
      expect(a.pos).toBe(3 + 4 * count);
    }
  });

  it('writes little-endian: 1.0 is 00 00 80 3f', () => {
    const writer = new ByteWriter(4);
    writeFloat32Block(writer, Float32Array.of(1));
    expect(Array.from(writer.bytes)).toEqual([0x00, 0x00, 0x80, 0x3f]);
  });

  it('knows this host is little-endian (the fast path is the tested one)', () => {
    expect(HOST_IS_LITTLE_ENDIAN).toBe(true);
  });

  it('finds the first non-finite value', () => {
    expect(firstNonFinite(Float32Array.of(0, -0, 3.4e38, 1e-45))).toBe(-1);
    expect(firstNonFinite(Float32Array.of(0, NaN, Infinity))).toBe(1);
    expect(firstNonFinite(Float32Array.of(1, 2, -Infinity))).toBe(2);
  });
});
