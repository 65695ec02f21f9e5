import { describe, expect, it } from 'vitest';
import { asciiToBytes } from './ascii';
import { crc32, crc32Hex, crc32Update } from './crc32';

describe('crc32', () => {
  // The standard check value of CRC-32/ISO-HDLC and two common known answers.
  const knownAnswers: [string, number][] = [
    ['', 0x00000000],
    ['a', 0xe8b7be43],
    ['123456789', 0xcbf43926],
    ['The quick brown fox jumps over the lazy dog', 0x414fa339],
  ];
  for (const [text, expected] of knownAnswers) {
    it(`of ${JSON.stringify(text)} is ${expected.toString(16)}`, () => {
      expect(crc32(asciiToBytes(text))).toBe(expected);
    });
  }

  it('formats as 8 lower-case hex digits', () => {
    expect(crc32Hex(asciiToBytes('123456789'))).toBe('cbf43926');
    expect(crc32Hex(new Uint8Array(0))).toBe('00000000');
  });

  it('can be continued chunk by chunk', () => {
    const bytes = Uint8Array.from({ length: 1000 }, (_, i) => (i * 37) & 0xff);
    const chunked = crc32Update(
      crc32Update(crc32(bytes.subarray(0, 123)), bytes.subarray(123, 700)),
      bytes.subarray(700),
    );
    expect(chunked).toBe(crc32(bytes));
  });

  it('changes when one bit flips', () => {
    const bytes = new Uint8Array(4096);
    const before = crc32(bytes);
    bytes[2000] = 0x10;
    expect(crc32(bytes)).not.toBe(before);
  });
});
