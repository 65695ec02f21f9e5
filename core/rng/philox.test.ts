import { describe, expect, it } from 'vitest';
import { mulhi32, philox4x32, type PhiloxCounter, type PhiloxKey } from './philox';

const hex = (words: Uint32Array) => Array.from(words, (w) => w.toString(16).padStart(8, '0'));

describe('Philox4x32-10', () => {
  // Known answers published with Random123 (kat_vectors).
  const vectors: [PhiloxCounter, PhiloxKey, string[]][] = [
    [
      [0, 0, 0, 0],
      [0, 0],
      ['6627e8d5', 'e169c58d', 'bc57ac4c', '9b00dbd8'],
    ],
    [
      [0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff],
      [0xffffffff, 0xffffffff],
      ['408f276d', '41c83b0e', 'a20bc7c6', '6d5451fd'],
    ],
    [
      [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
      [0xa4093822, 0x299f31d0],
      ['d16cfe09', '94fdcceb', '5001e420', '24126ea1'],
    ],
  ];
  for (const [counter, key, expected] of vectors) {
    it(`matches Random123 for counter ${counter.map((c) => c.toString(16)).join(',')}`, () => {
      expect(hex(philox4x32(counter, key))).toEqual(expected);
    });
  }

  it('mulhi32 equals the BigInt product on edge and random values', () => {
    const values = [0, 1, 0xffff, 0x10000, 0xffffffff, 0xd2511f53, 0xcd9e8d57, 0x80000000];
    let s = 12345;
    for (let i = 0; i < 200; i++) {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0;
      values.push(s);
    }
    for (const a of values) {
      for (const b of values) {
        const expected = Number((BigInt(a) * BigInt(b)) >> 32n);
        expect(mulhi32(a, b)).toBe(expected);
      }
    }
  });
});
