import { describe, expect, it } from 'vitest';
import type { AtomSample, LayerSample } from '../atomo/types';
import { decodeLayer, encodeLayer } from './index';
import { sampleBits } from './testing/random-samples';

// Hand-assembled bytes of small messages, straight from docs/wire-format.md.
// They pin the format: a change to any of them is a change to the wire.
function hex(text: string): Uint8Array {
  const digits = text.replace(/\s+/g, '');
  return Uint8Array.from({ length: digits.length / 2 }, (_, i) => parseInt(digits.slice(2 * i, 2 * i + 2), 16));
}

/** An atomo-auto sample carrying `atoms`. */
const auto = (atoms: AtomSample): LayerSample => ({ scheme: 'atomo-auto', shape: atoms.shape, atoms });

const cases: [string, LayerSample, number, string][] = [
  [
    'none 1×2 [1.5, -2]',
    { scheme: 'none', shape: [1, 2], values: Float32Array.of(1.5, -2) },
    3,
    '02 00 0300 01000000 02000000   0000c03f 000000c0',
  ],
  [
    // τ = 0.5 (a tie, so the smaller magnitude); codes 00 (+τ), 10 (own value −2) → byte 0x08.
    'atomo-entry 2×3 indices [1, 5]',
    { scheme: 'atomo-entry', shape: [2, 3], indices: Uint32Array.of(1, 5), values: Float32Array.of(0.5, -2) },
    0,
    '02 01 0000 02000000 03000000   02000000 01 03 0000003f 08 000000c0',
  ],
  [
    // τ = 0.25 shared by two entries; codes 00, 01 (−τ), 10 (own value 3) → byte 0b100100 = 0x24.
    'atomo-entry 2×3 indices [0, 2, 4], values ±τ and one saturated',
    { scheme: 'atomo-entry', shape: [2, 3], indices: Uint32Array.of(0, 2, 4), values: Float32Array.of(0.25, -0.25, 3) },
    0,
    '02 01 0000 02000000 03000000   03000000 00 01 01 0000803e 24 00004040',
  ],
  [
    'atomo-entry 1×1000 index 300 (two-byte varint)',
    { scheme: 'atomo-entry', shape: [1, 1000], indices: Uint32Array.of(300), values: Float32Array.of(1) },
    1,
    '02 01 0100 01000000 e8030000   01000000 ac02 0000803f 00',
  ],
  [
    'atomo-svd 2×2 one atom',
    {
      scheme: 'atomo-svd',
      shape: [2, 2],
      count: 1,
      u: Float32Array.of(1, 0),
      v: Float32Array.of(0, 1),
      scales: Float32Array.of(3),
    },
    258,
    '02 02 0201 02000000 02000000   01000000 0000803f 00000000 00000000 0000803f 00004040',
  ],
  [
    'qsgd 1×3 s=4: (+,4) (−,1) (+,0)',
    {
      scheme: 'qsgd',
      shape: [1, 3],
      levels: 4,
      coding: 'fixed',
      bucketSize: 0,
      norms: Float32Array.of(2),
      negative: Uint8Array.of(0, 1, 0),
      level: Uint16Array.of(4, 1, 0),
    },
    0,
    // levels 4, bucket 0 (one norm), norm 2.0; 4-bit codes sign|level<<1: 8, 3, 0 → 0x38, 0x00
    '02 03 0000 01000000 03000000   0400 00000000 00000040 38 00',
  ],
  [
    'qsgd 1×3 s=3 in buckets of 2: norms 2 and 1',
    {
      scheme: 'qsgd',
      shape: [1, 3],
      levels: 3,
      coding: 'fixed',
      bucketSize: 2,
      norms: Float32Array.of(2, 1),
      negative: Uint8Array.of(1, 0, 0),
      level: Uint16Array.of(3, 1, 2),
    },
    1,
    // 3-bit codes sign|level<<1: 7, 2, 4, LSB-first → byte 0 = 7 | 2<<3 | (4 & 3)<<6 = 0x17, byte 1 = 4>>2 = 0x01
    '02 03 0100 01000000 03000000   0300 02000000 00000040 0000803f 17 01',
  ],
  [
    'qsgd-elias 1×5 s=4: (+,4) 0 (−,1) 0 (+,2)',
    {
      scheme: 'qsgd',
      shape: [1, 5],
      levels: 4,
      coding: 'elias',
      bucketSize: 0,
      norms: Float32Array.of(2),
      negative: Uint8Array.of(0, 0, 1, 0, 0),
      level: Uint16Array.of(4, 0, 1, 0, 2),
    },
    0,
    // wire id 8; levels 4, bucket 0, norm 2.0; then LSB-first: count 3 as γ(4) = 00100, then per non-zero level
    // γ(gap) sign γ(level): 1 0 00100 | 010 1 1 | 010 0 010: 24 bits → 0x24 0xa2 0x45
    '02 08 0000 01000000 05000000   0400 00000000 00000040 24 a2 45',
  ],
  [
    'qsgd-elias 1×3 s=1 in buckets of 2: 0 (−,1) | (+,1)',
    {
      scheme: 'qsgd',
      shape: [1, 3],
      levels: 1,
      coding: 'elias',
      bucketSize: 2,
      norms: Float32Array.of(2, 1),
      negative: Uint8Array.of(0, 1, 0),
      level: Uint16Array.of(0, 1, 1),
    },
    1,
    // bucket 0: γ(2) = 010, gap γ(2) = 010, sign 1, γ(1) = 1; bucket 1: γ(2) = 010, gap γ(1) = 1, sign 0, γ(1) = 1:
    // 14 bits → 0xd2 0x2a (two padding zeros)
    '02 08 0100 01000000 03000000   0100 02000000 00000040 0000803f d2 2a',
  ],
  [
    'qsgd-elias 2×2 s=3, all levels 0',
    {
      scheme: 'qsgd',
      shape: [2, 2],
      levels: 3,
      coding: 'elias',
      bucketSize: 0,
      norms: Float32Array.of(0),
      negative: new Uint8Array(4),
      level: new Uint16Array(4),
    },
    2,
    // count 0 as γ(1) = 1, seven padding zeros
    '02 08 0200 02000000 02000000   0300 00000000 00000000 01',
  ],
  [
    'terngrad 1×5 [+1, −1, 0, +1, −1]',
    { scheme: 'terngrad', shape: [1, 5], scaler: 1, ternary: Int8Array.of(1, -1, 0, 1, -1) },
    0,
    // 2-bit codes 01 10 00 01 | 10 → 0b01_00_10_01 = 0x49, 0x02
    '02 04 0000 01000000 05000000   0000803f 49 02',
  ],
  [
    'atomo-dct 2×3 coefficients [0, 4]',
    { scheme: 'atomo-dct', shape: [2, 3], indices: Uint32Array.of(0, 4), values: Float32Array.of(1, -2) },
    2,
    // the atomo-entry body: count 2, deltas 0 and 4 − 0 − 1 = 3, τ = 1 (the tie goes to the smaller),
    // codes +τ then own (00, 10 → 0x08), the own value −2
    '02 05 0200 02000000 03000000   02000000 00 03 0000803f 08 000000c0',
  ],
  [
    'powersgd 2×3 rank 1',
    { scheme: 'powersgd', shape: [2, 3], rank: 1, p: Float32Array.of(1, 0), q: Float32Array.of(0.5, -2, 0) },
    1,
    // rank, then P̂'s column, then Q's column
    '02 06 0100 02000000 03000000   01000000 0000803f 00000000 0000003f 000000c0 00000000',
  ],
  [
    'atomo-auto 2×3 carrying entries [1, 5]',
    auto({ scheme: 'atomo-entry', shape: [2, 3], indices: Uint32Array.of(1, 5), values: Float32Array.of(0.5, -2) }),
    3,
    // decomposition 01 (atomo-entry), then the atomo-entry body of the golden case above
    '02 07 0300 02000000 03000000   01   02000000 01 03 0000003f 08 000000c0',
  ],
  [
    'atomo-auto 2×2 carrying one spectral atom',
    auto({
      scheme: 'atomo-svd',
      shape: [2, 2],
      count: 1,
      u: Float32Array.of(1, 0),
      v: Float32Array.of(0, 1),
      scales: Float32Array.of(3),
    }),
    0,
    // decomposition 02 (atomo-svd), then its body
    '02 07 0000 02000000 02000000   02   01000000 0000803f 00000000 00000000 0000803f 00004040',
  ],
  [
    'atomo-auto 2×3 carrying DCT coefficients [0, 4]',
    auto({ scheme: 'atomo-dct', shape: [2, 3], indices: Uint32Array.of(0, 4), values: Float32Array.of(1, -2) }),
    2,
    // decomposition 05 (atomo-dct), then the atomo-dct body of the golden case above
    '02 07 0200 02000000 03000000   05   02000000 00 03 0000803f 08 000000c0',
  ],
];

describe('golden bytes', () => {
  for (const [name, sample, layer, bytes] of cases) {
    it(`encodes ${name}`, () => {
      expect(encodeLayer(sample, layer)).toEqual(hex(bytes));
    });
    it(`decodes ${name}`, () => {
      const decoded = decodeLayer(hex(bytes));
      expect(decoded.layer).toBe(layer);
      expect(sampleBits(decoded.sample)).toEqual(sampleBits(sample));
    });
  }
});
