import { describe, expect, it } from 'vitest';
import { QSGD_CODINGS, SCHEME_NAMES, sampleDecomposition, type LayerSample, type Shape } from '../atomo/types';
import { reconstruct } from '../atomo/reconstruct';
import { decodeLayer, encodeForWire, encodeLayer, messageDecomposition } from './index';
import { seededRng } from '../testing/seeded';
import {
  randomEntry,
  randomQsgd,
  randomSample,
  randomShape,
  randomSpectral,
  randomTernGrad,
  sampleBits,
  toHex,
} from './testing/random-samples';

function expectRoundTrip(sample: LayerSample, layer: number): void {
  const bytes = encodeLayer(sample, layer);
  const decoded = decodeLayer(bytes);
  expect(decoded.layer).toBe(layer);
  expect(sampleBits(decoded.sample)).toEqual(sampleBits(sample));
  // Canonical: decoding then encoding gives the same bytes.
  expect(toHex(encodeLayer(decoded.sample, layer))).toBe(toHex(bytes));
}

const EDGE_SHAPES: Shape[] = [
  [1, 1],
  [1, 7],
  [9, 1],
  [3, 5],
  [7, 3],
  [13, 17],
  [1, 33],
];

describe('round trip', () => {
  for (const scheme of SCHEME_NAMES) {
    it(`${scheme}: random shapes and values, bit-exact`, () => {
      const rng = seededRng(1000 + SCHEME_NAMES.indexOf(scheme));
      for (let trial = 0; trial < 200; trial++) {
        const shape = trial < EDGE_SHAPES.length ? EDGE_SHAPES[trial]! : randomShape(rng, 40);
        expectRoundTrip(randomSample(rng, scheme, shape), trial % 0x10000);
      }
    });
  }

  it('keeps the largest layer index, 65535', () => {
    expectRoundTrip(randomSample(seededRng(1), 'none', [2, 2]), 0xffff);
  });

  it('atomo-svd with k = 0 atoms and with k = min(rows, cols)', () => {
    const rng = seededRng(2);
    for (const shape of EDGE_SHAPES) {
      expectRoundTrip(randomSpectral(rng, shape, 0), 1);
      expectRoundTrip(randomSpectral(rng, shape, Math.min(shape[0], shape[1])), 1);
    }
  });

  it('atomo-entry with no entries, every entry, and the last entry only', () => {
    const rng = seededRng(3);
    for (const shape of EDGE_SHAPES) {
      expectRoundTrip(randomEntry(rng, shape, 0), 2);
      expectRoundTrip(randomEntry(rng, shape, 1), 2);
      const last = shape[0] * shape[1] - 1;
      expectRoundTrip({ scheme: 'atomo-entry', shape, indices: Uint32Array.of(last), values: Float32Array.of(-0) }, 2);
    }
  });

  it('atomo-entry with gaps needing 1 to 5 varint bytes', () => {
    const indices = Uint32Array.of(0, 128, 128 + 16385, 2 ** 21 + 20000, 2 ** 29, 2 ** 30 - 1);
    const sample: LayerSample = {
      scheme: 'atomo-entry',
      shape: [2 ** 15, 2 ** 15],
      indices,
      values: new Float32Array(indices.length).fill(1),
    };
    // A 2^30-entry layer is above the default decode limit; raise it for this test.
    const bytes = encodeLayer(sample, 0);
    expect(sampleBits(decodeLayer(bytes, { maxElements: 2 ** 30 }).sample)).toEqual(sampleBits(sample));
  });

  it('qsgd and terngrad all zero, at odd sizes that leave padding', () => {
    for (const shape of EDGE_SHAPES) {
      const n = shape[0] * shape[1];
      for (const levels of [1, 2, 4, 255, 65535]) {
        for (const coding of QSGD_CODINGS) {
          expectRoundTrip(
            {
              scheme: 'qsgd',
              shape,
              levels,
              coding,
              bucketSize: 0,
              norms: new Float32Array(1),
              negative: new Uint8Array(n),
              level: new Uint16Array(n),
            },
            4,
          );
          expectRoundTrip(
            {
              scheme: 'qsgd',
              shape,
              levels,
              coding,
              bucketSize: 2,
              norms: new Float32Array(Math.max(1, Math.ceil(n / 2))),
              negative: new Uint8Array(n),
              level: new Uint16Array(n),
            },
            4,
          );
        }
      }
      expectRoundTrip({ scheme: 'terngrad', shape, scaler: 0, ternary: new Int8Array(n) }, 4);
    }
  });

  it('qsgd at every level count from 1 to 40 and at the u16 extremes, in both codings', () => {
    const rng = seededRng(4);
    for (const coding of QSGD_CODINGS) {
      for (let levels = 1; levels <= 40; levels++) expectRoundTrip(randomQsgd(rng, [3, 7], levels, 0, coding), 5);
      for (const levels of [255, 256, 32767, 32768, 65535]) {
        expectRoundTrip(randomQsgd(rng, [5, 5], levels, 3, coding), 5);
      }
    }
  });

  it('qsgd with every level at s and every sign negative, in both codings', () => {
    const n = 11;
    for (const coding of QSGD_CODINGS) {
      const sample: LayerSample = {
        scheme: 'qsgd',
        shape: [1, n],
        levels: 65535,
        coding,
        bucketSize: 4,
        norms: Float32Array.of(3.5, 1, 0),
        negative: new Uint8Array(n).fill(1),
        level: new Uint16Array(n).fill(65535),
      };
      expectRoundTrip(sample, 6);
    }
  });

  it('qsgd-elias: one non-zero level at the end of a long bucket (a 17-bit gap), and buckets of one entry', () => {
    const n = 70_000;
    const level = new Uint16Array(n);
    level[n - 1] = 3;
    const negative = new Uint8Array(n);
    negative[n - 1] = 1;
    const long: LayerSample = {
      scheme: 'qsgd',
      shape: [1, n],
      levels: 3,
      coding: 'elias',
      bucketSize: 0,
      norms: Float32Array.of(2),
      negative,
      level,
    };
    expectRoundTrip(long, 1);
    // Count γ(1) = 1 bit, gap γ(70000) = 33 bits, the sign, level γ(3) = 3 bits: 38 bits in 5 bytes.
    expect(encodeLayer(long, 1).length).toBe(12 + 2 + 4 + 4 + 5);
    expectRoundTrip(randomQsgd(seededRng(8), [4, 4], 7, 1, 'elias'), 2);
  });

  it('qsgd-elias drops the sign of a level-0 entry (it sends none): the estimate is the same, +0 for −0', () => {
    const sample: LayerSample = {
      scheme: 'qsgd',
      shape: [1, 3],
      levels: 2,
      coding: 'elias',
      bucketSize: 0,
      norms: Float32Array.of(1),
      negative: Uint8Array.of(1, 1, 0),
      level: Uint16Array.of(0, 2, 0),
    };
    const decoded = decodeLayer(encodeLayer(sample, 0)).sample;
    expect(decoded.scheme === 'qsgd' && Array.from(decoded.negative)).toEqual([0, 1, 0]);
    expect(Array.from(reconstruct(decoded), (x) => x + 0)).toEqual(Array.from(reconstruct(sample), (x) => x + 0));
  });

  it('terngrad at every size from 1 to 20 (all padding remainders)', () => {
    const rng = seededRng(5);
    for (let n = 1; n <= 20; n++) expectRoundTrip(randomTernGrad(rng, [1, n]), 7);
  });

  it('returns arrays that do not alias the input bytes', () => {
    const bytes = encodeLayer({ scheme: 'none', shape: [1, 2], values: Float32Array.of(1, 2) }, 0);
    const decoded = decodeLayer(bytes).sample;
    bytes.fill(0);
    expect(decoded.scheme === 'none' && Array.from(decoded.values)).toEqual([1, 2]);
  });

  it('decodes from an unaligned view into a larger buffer', () => {
    const rng = seededRng(6);
    for (const scheme of SCHEME_NAMES) {
      const sample = randomSample(rng, scheme, [5, 3]);
      const bytes = encodeLayer(sample, 9);
      const padded = new Uint8Array(bytes.length + 8);
      padded.set(bytes, 3);
      const view = padded.subarray(3, 3 + bytes.length);
      expect(sampleBits(decodeLayer(view).sample)).toEqual(sampleBits(sample));
    }
  });

  it('encodes float32 values bit-exactly, including -0 and subnormals', () => {
    const values = Float32Array.of(-0, 0, 1.401298464324817e-45, -3.4028234663852886e38, 0.1);
    const decoded = decodeLayer(encodeLayer({ scheme: 'none', shape: [1, 5], values }, 0)).sample;
    expect(decoded.scheme === 'none' && Object.is(decoded.values[0], -0)).toBe(true);
    expect(sampleBits(decoded)).toEqual(sampleBits({ scheme: 'none', shape: [1, 5], values }));
  });
});

describe('encodeForWire: never more than dense float32, always the same estimate', () => {
  it('sends a 1×n bias with one spectral atom as dense (4·(n + 2) body bytes against 4·n)', () => {
    const sample: LayerSample = {
      scheme: 'atomo-svd',
      shape: [1, 3],
      count: 1,
      u: Float32Array.of(1),
      v: Float32Array.of(0.6, 0, -0.8),
      scales: Float32Array.of(5),
    };
    const bytes = encodeForWire(sample, 4);
    expect(bytes.length).toBe(denseBytesOf([1, 3]));
    const decoded = decodeLayer(bytes);
    expect(decoded.layer).toBe(4);
    expect(decoded.sample.scheme).toBe('none');
    expect(reconstruct(decoded.sample)).toEqual(reconstruct(sample));
  });

  it('keeps the scheme encoding whenever it is not larger, on random samples of every scheme', () => {
    const rng = seededRng(77);
    let fellBack = 0;
    for (let trial = 0; trial < 300; trial++) {
      const scheme = SCHEME_NAMES[trial % SCHEME_NAMES.length]!;
      const sample = randomSample(rng, scheme, randomShape(rng, 20));
      const bytes = encodeForWire(sample, 0);
      const own = encodeLayer(sample, 0);
      const dense = denseBytesOf(sample.shape);
      const estimate = reconstruct(sample);
      if (!estimate.every(Number.isFinite)) {
        // Random values can overflow when multiplied out: no dense form exists, the scheme's own bytes go.
        expect(bytes).toEqual(own);
        continue;
      }
      expect(bytes.length).toBe(Math.min(own.length, dense));
      if (own.length > dense) fellBack++;
      else expect(bytes).toEqual(own);
      expect(reconstruct(decodeLayer(bytes).sample)).toEqual(estimate);
    }
    // Both branches ran (small random shapes make the scheme's encoding the larger one now and then).
    expect(fellBack).toBeGreaterThan(0);
    expect(fellBack).toBeLessThan(300);
  });
});

function denseBytesOf([rows, cols]: readonly [number, number]): number {
  return 12 + 4 * rows * cols;
}

describe('messageDecomposition', () => {
  it('reads from the header (and atomo-auto’s first body byte) what the message decodes to', () => {
    const rng = seededRng(31);
    for (const scheme of SCHEME_NAMES) {
      for (let i = 0; i < 20; i++) {
        const sample = randomSample(rng, scheme, randomShape(rng, 6));
        const bytes = encodeLayer(sample, 0);
        expect(messageDecomposition(bytes), scheme).toBe(sampleDecomposition(decodeLayer(bytes).sample));
      }
    }
    expect(messageDecomposition(new Uint8Array(5))).toBeNull();
  });
});
