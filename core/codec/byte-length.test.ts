import { describe, expect, it } from 'vitest';
import { SCHEME_NAMES, type LayerSample } from '../atomo/types';
import { encodedByteLength, encodeLayer } from './index';
import { seededRng } from '../testing/seeded';
import { randomEntry, randomQsgd, randomSample, randomShape, randomSpectral } from './testing/random-samples';

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

/** Bits of the Elias-γ code of v ≥ 1: 2L − 1 for its L binary digits, counted by halving. */
function gammaLength(value: number): number {
  let digits = 0;
  for (let v = value; v >= 1; v = Math.floor(v / 2)) digits++;
  return 2 * digits - 1;
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
      // Entries of the most common magnitude cost 2 bits; each other one 2 bits + a float32.
      const count = sample.indices.length;
      const multiplicity = new Map<number, number>();
      for (const x of sample.values) multiplicity.set(Math.abs(x), (multiplicity.get(Math.abs(x)) ?? 0) + 1);
      const own = count - Math.max(0, ...multiplicity.values());
      return 12 + 4 + varints + (count > 0 ? 4 + Math.ceil(count / 4) + 4 * own : 0);
    }
    case 'qsgd': {
      // levels, bucket size, one float32 norm per bucket of d entries (one for d = 0), then the packed codes.
      const norms = 4 * (sample.bucketSize === 0 ? 1 : Math.max(1, Math.ceil((m * n) / sample.bucketSize)));
      if (sample.coding === 'fixed')
        return 12 + 2 + 4 + norms + Math.ceil((m * n * (1 + ceilLog2(sample.levels + 1))) / 8);
      // Elias: per bucket γ(count + 1), and per non-zero level γ(gap), a sign bit, γ(level).
      const d = sample.bucketSize === 0 ? m * n : sample.bucketSize;
      let bits = 0;
      for (let start = 0; start < m * n; start += d) {
        let count = 0;
        let previous = start - 1;
        for (let i = start; i < Math.min(m * n, start + d); i++) {
          const level = sample.level[i]!;
          if (level === 0) continue;
          count++;
          bits += gammaLength(i - previous) + 1 + gammaLength(level);
          previous = i;
        }
        bits += gammaLength(count + 1);
      }
      return 12 + 2 + 4 + norms + Math.ceil(bits / 8);
    }
    case 'terngrad':
      return 12 + 4 + Math.ceil((m * n) / 4);
    case 'powersgd':
      return 12 + 4 + 4 * sample.rank * (m + n);
    case 'atomo-auto':
      // One byte naming the decomposition, then its own body.
      return 1 + documentedLength(sample.atoms);
  }
}

describe('byte counts', () => {
  for (const scheme of SCHEME_NAMES) {
    it(`${scheme}: encodedByteLength = encoded length = documented formula`, () => {
      const rng = seededRng(2000 + SCHEME_NAMES.indexOf(scheme));
      for (let trial = 0; trial < 150; trial++) {
        const sample = randomSample(rng, scheme, randomShape(rng, 50));
        const formula = documentedLength(sample);
        expect(encodedByteLength(sample)).toBe(formula);
        expect(encodeLayer(sample, 0).length).toBe(formula);
      }
    });
  }

  it('qsgd: bits per entry are 1 + ⌈log2(s+1)⌉ at every s from 1 to 300', () => {
    const rng = seededRng(3);
    for (let levels = 1; levels <= 300; levels++) {
      const sample = randomQsgd(rng, [1, 8], levels, 0, 'fixed');
      // 8 entries: exactly (1 + b) bytes of packed data after header, levels, bucket size and one norm.
      expect(encodedByteLength(sample)).toBe(22 + 1 + ceilLog2(levels + 1));
    }
  });

  it('atomo-entry: varint widths 1..5 at their boundaries', () => {
    // One index per sample, so the varint is the index itself: w bytes hold the indices below 2^(7w).
    for (let bytes = 1; bytes <= 5; bytes++) {
      const first = bytes === 1 ? 0 : 2 ** (7 * (bytes - 1));
      // The layer (2^30 entries) ends inside the 5-byte width.
      const last = bytes === 5 ? 2 ** 30 - 1 : 2 ** (7 * bytes) - 1;
      for (const index of [first, last]) {
        const sample: LayerSample = {
          scheme: 'atomo-entry',
          shape: [2 ** 15, 2 ** 15],
          indices: Uint32Array.of(index),
          values: Float32Array.of(1),
        };
        // + τ (4) + one byte of codes.
        expect(encodedByteLength(sample)).toBe(16 + bytes + 4 + 1);
      }
    }
  });

  it('the 784×128 worked example of docs/wire-format.md', () => {
    const rng = seededRng(4);
    const shape = [784, 128] as const;
    expect(encodedByteLength(randomSample(rng, 'none', shape))).toBe(401_420);
    expect(encodedByteLength(randomSpectral(rng, shape, 4))).toBe(14_624);
    expect(encodedByteLength(randomQsgd(rng, shape, 4, 0, 'fixed'))).toBe(50_198);
    expect(encodedByteLength(randomSample(rng, 'terngrad', shape))).toBe(25_104);
    // Four unsaturated entries (±τ) with gaps of ~25k: four 3-byte varints, τ, one byte of codes.
    const tau = 0.125;
    const entry: LayerSample = {
      scheme: 'atomo-entry',
      shape,
      indices: Uint32Array.of(20_000, 45_000, 70_000, 95_000),
      values: Float32Array.of(tau, -tau, -tau, tau),
    };
    expect(encodedByteLength(entry)).toBe(33);
    // One of them saturated (its own value): 4 bytes more.
    expect(encodedByteLength({ ...entry, values: Float32Array.of(tau, -tau, 7, tau) })).toBe(37);
    expect(encodedByteLength(randomEntry(rng, shape, 0))).toBe(16);
  });
});
