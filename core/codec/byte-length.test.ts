import { describe, expect, it } from 'vitest';
import { SCHEME_NAMES, type LayerSample } from '../atomo/types';
import { encodedByteLength, encodeLayer } from './index';
import { makeRng, randomEntry, randomQsgd, randomSample, randomShape, randomSpectral } from './testing/random-samples';

// The formulas of docs/wire-format.md, written out again here on purpose:
// they must not share code with the codec they check.

/** LEB128 bytes of a value: one per started group of 7 bits, at least one. */
function leb128Bytes(value: number): number {
  let bytes = 1;
  while (value >= 2 ** (7 * bytes)) bytes++;
  return bytes;
}

/** ⌈log2(s+1)⌉ by counting, not by floating-point log. */
function ceilLog2(x: number): number {
  let b = 0;
  while (2 ** b < x) b++;
  return b;
}

function documentedLength(sample: LayerSample): number {
  const [m, n] = sample.shape;
  switch (sample.scheme) {
    case 'none':
      return 12 + 4 * m * n;
    case 'atomo-svd':
      return 12 + 4 + 4 * sample.count * (m + n + 1);
    case 'atomo-entry':
    case 'atomo-dct': {
      let varints = 0;
      let previous = -1;
      for (const index of sample.indices) {
        varints += leb128Bytes(index - previous - 1);
        previous = index;
      }
      return 12 + 4 + varints + 4 * sample.indices.length;
    }
    case 'qsgd':
      return 12 + 4 + 2 + Math.ceil((m * n * (1 + ceilLog2(sample.levels + 1))) / 8);
    case 'terngrad':
      return 12 + 4 + Math.ceil((m * n) / 4);
    case 'powersgd':
      return 12 + 4 + 4 * sample.rank * (m + n);
  }
}

describe('byte counts', () => {
  for (const scheme of SCHEME_NAMES) {
    it(`${scheme}: encodedByteLength = encoded length = documented formula`, () => {
      const rng = makeRng(2000 + SCHEME_NAMES.indexOf(scheme));
      for (let trial = 0; trial < 150; trial++) {
        const sample = randomSample(rng, scheme, randomShape(rng, 50));
        const formula = documentedLength(sample);
        expect(encodedByteLength(sample)).toBe(formula);
        expect(encodeLayer(sample, 0).length).toBe(formula);
      }
    });
  }

  it('qsgd: bits per entry are 1 + ⌈log2(s+1)⌉ at every s from 1 to 300', () => {
    const rng = makeRng(3);
    for (let levels = 1; levels <= 300; levels++) {
      const sample = randomQsgd(rng, [1, 8], levels);
      // 8 entries: exactly (1 + b) bytes of packed data.
      expect(encodedByteLength(sample)).toBe(18 + 1 + ceilLog2(levels + 1));
    }
  });

  it('atomo-entry: varint widths 1..5 at their boundaries', () => {
    // One index per sample, so the varint is the index itself.
    for (const [index, bytes] of [
      [127, 1],
      [128, 2],
      [16383, 2],
      [16384, 3],
      [2 ** 21, 4],
      [2 ** 28, 5],
    ] as const) {
      const sample: LayerSample = { scheme: 'atomo-entry', shape: [2 ** 15, 2 ** 15], indices: Uint32Array.of(index), values: Float32Array.of(1) };
      expect(encodedByteLength(sample)).toBe(16 + bytes + 4);
    }
  });

  it('the 784×128 worked example of docs/wire-format.md', () => {
    const rng = makeRng(4);
    const shape = [784, 128] as const;
    expect(encodedByteLength(randomSample(rng, 'none', shape))).toBe(401_420);
    expect(encodedByteLength(randomSpectral(rng, shape, 4))).toBe(14_624);
    expect(encodedByteLength(randomQsgd(rng, shape, 4))).toBe(50_194);
    expect(encodedByteLength(randomSample(rng, 'terngrad', shape))).toBe(25_104);
    // Four entries with gaps of ~25k: four 3-byte varints.
    const entry: LayerSample = { scheme: 'atomo-entry', shape, indices: Uint32Array.of(20_000, 45_000, 70_000, 95_000), values: new Float32Array(4) };
    expect(encodedByteLength(entry)).toBe(44);
    expect(encodedByteLength(randomEntry(rng, shape, 0))).toBe(16);
  });
});
