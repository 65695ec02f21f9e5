import { describe, expect, it } from 'vitest';
import { SCHEME_NAMES, type AtomSample, type LayerSample, type PowerSgdSample } from '../atomo/types';
import { SCHEME_BY_ID } from './header';
import { CodecError, decodeLayer, encodeLayer, type CodecErrorCode, type DecodeLimits } from './index';

/** Runs `action` and checks it throws a CodecError with `code` and a message matching `message`. */
function expectCodecError(action: () => unknown, code: CodecErrorCode, message?: RegExp): CodecError {
  let caught: unknown;
  try {
    action();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(CodecError);
  const error = caught as CodecError;
  expect(error.code).toBe(code);
  if (message) expect(error.message).toMatch(message);
  return error;
}

function rejects(bytes: Uint8Array, code: CodecErrorCode, message?: RegExp, limits?: DecodeLimits): void {
  expectCodecError(() => decodeLayer(bytes, limits), code, message);
}

/** rejects() of patched(sample, patch): a valid encoding, patched, refused with `code`. */
function rejectsPatched(
  sample: LayerSample,
  patch: (view: DataView, bytes: Uint8Array) => void,
  code: CodecErrorCode,
  message?: RegExp,
): void {
  rejects(patched(sample, patch), code, message);
}

/** A valid encoding, then `patch` applied to a copy through a DataView. */
function patched(sample: LayerSample, patch: (view: DataView, bytes: Uint8Array) => void, layer = 0): Uint8Array {
  const bytes = encodeLayer(sample, layer).slice();
  patch(new DataView(bytes.buffer), bytes);
  return bytes;
}

const dense = (rows: number, cols: number): LayerSample => ({
  scheme: 'none',
  shape: [rows, cols],
  values: new Float32Array(rows * cols).fill(0.25),
});
const entry = (indices: number[], shape: [number, number] = [4, 5]): LayerSample => ({
  scheme: 'atomo-entry',
  shape,
  indices: Uint32Array.from(indices),
  values: new Float32Array(indices.length).fill(1),
});
const dct = (indices: number[]): LayerSample => ({
  scheme: 'atomo-dct',
  shape: [4, 5],
  indices: Uint32Array.from(indices),
  values: new Float32Array(indices.length).fill(1),
});
const spectral = (rows: number, cols: number, count: number): LayerSample => ({
  scheme: 'atomo-svd',
  shape: [rows, cols],
  count,
  u: new Float32Array(count * rows).fill(0.5),
  v: new Float32Array(count * cols).fill(0.5),
  scales: new Float32Array(count).fill(2),
});
const powersgd = (rows: number, cols: number, rank: number): LayerSample => ({
  scheme: 'powersgd',
  shape: [rows, cols],
  rank,
  p: new Float32Array(rank * rows).fill(0.5),
  q: new Float32Array(rank * cols).fill(-1),
});
const qsgd = (n: number, levels = 4, norm = 1): LayerSample => ({
  scheme: 'qsgd',
  shape: [1, n],
  levels,
  coding: 'fixed',
  bucketSize: 0,
  norms: Float32Array.of(norm),
  negative: new Uint8Array(n),
  level: new Uint16Array(n),
});
const terngrad = (n: number, scaler = 1): LayerSample => ({
  scheme: 'terngrad',
  shape: [1, n],
  scaler,
  ternary: new Int8Array(n),
});

/** An Elias-coded QSGD sample of 1×n at s = 4 in buckets of `bucketSize`, with levels `levels` (the rest 0). */
const qsgdElias = (n: number, levels: number[], bucketSize = 0): LayerSample => {
  const level = new Uint16Array(n);
  level.set(levels);
  return {
    scheme: 'qsgd',
    shape: [1, n],
    levels: 4,
    coding: 'elias',
    bucketSize,
    norms: new Float32Array(bucketSize === 0 ? 1 : Math.ceil(n / bucketSize)).fill(1),
    negative: Uint8Array.from(level, (l) => (l > 0 ? 1 : 0)),
    level,
  };
};

/**
 * A qsgd-elias message of 1×n, s = 4, one bucket (norm 1), whose stream is `bits` ('0'/'1' in stream order,
 * spaces ignored), packed LSB-first and zero padded.
 */
function eliasMessage(n: number, bits: string, bucketSize = 0): Uint8Array {
  const stream = bits.replace(/\s+/g, '');
  const buckets = bucketSize === 0 ? 1 : Math.ceil(n / bucketSize);
  const bytes = new Uint8Array(12 + 6 + 4 * buckets + Math.ceil(stream.length / 8));
  const view = new DataView(bytes.buffer);
  view.setUint8(0, 2);
  view.setUint8(1, 8);
  view.setUint32(4, 1, true);
  view.setUint32(8, n, true);
  view.setUint16(12, 4, true);
  view.setUint32(14, bucketSize, true);
  for (let k = 0; k < buckets; k++) view.setFloat32(18 + 4 * k, 1, true);
  const start = 18 + 4 * buckets;
  for (let j = 0; j < stream.length; j++) if (stream[j] === '1') bytes[start + (j >> 3)]! |= 1 << (j & 7);
  return bytes;
}

const ALL_SCHEMES: [string, LayerSample][] = [
  ['none', dense(3, 2)],
  ['atomo-entry', entry([0, 7, 19])],
  ['atomo-svd', spectral(3, 4, 2)],
  ['qsgd', qsgd(5)],
  ['qsgd-elias', qsgdElias(9, [0, 3, 0, 0, 4, 1])],
  ['qsgd-elias in buckets', qsgdElias(9, [2, 0, 0, 0, 1], 4)],
  ['terngrad', terngrad(5)],
  ['atomo-dct', dct([1, 2, 18])],
  ['powersgd', powersgd(3, 4, 2)],
  ['atomo-auto', { scheme: 'atomo-auto', shape: [4, 5], atoms: entry([0, 7, 19]) as AtomSample }],
  ['atomo-auto', { scheme: 'atomo-auto', shape: [3, 4], atoms: spectral(3, 4, 2) as AtomSample }],
];

// Offsets of the header fields and of the first body fields.
const VERSION = 0;
const SCHEME = 1;
const ROWS = 4;
const COLS = 8;
const BODY = 12;

describe('decodeLayer rejects', () => {
  it('not-bytes: anything but a Uint8Array', () => {
    expectCodecError(() => decodeLayer([1, 4, 0, 0] as unknown as Uint8Array), 'not-bytes', /Array/);
    expectCodecError(() => decodeLayer(null as unknown as Uint8Array), 'not-bytes', /null/);
  });

  it('truncated: a short or empty header', () => {
    const bytes = encodeLayer(dense(1, 1), 0);
    rejects(bytes.subarray(0, 7), 'truncated', /need 12 bytes of header .* got 7/);
    rejects(new Uint8Array(0), 'truncated', /got 0/);
  });

  it('truncated: every scheme missing its last body byte', () => {
    for (const [, sample] of ALL_SCHEMES) {
      const bytes = encodeLayer(sample, 0);
      rejects(bytes.subarray(0, bytes.length - 1), 'truncated');
      rejects(bytes.subarray(0, BODY), 'truncated');
    }
  });

  it('truncated: an entry count promising more entries than bytes remain', () => {
    // Each entry needs at least one byte after the count; claim 20 with 7 bytes left (a 2-byte varint, τ, one code
    // byte).
    const bytes = patched(entry([200], [20, 20]), (v) => v.setUint32(BODY, 20, true));
    rejects(bytes, 'truncated', /20 entries/);
  });

  it('trailing-bytes: one extra byte after a complete body, for every scheme', () => {
    for (const [, sample] of ALL_SCHEMES) {
      const bytes = encodeLayer(sample, 0);
      const longer = new Uint8Array(bytes.length + 1);
      longer.set(bytes);
      rejects(longer, 'trailing-bytes', new RegExp(`ends at byte ${bytes.length}, input has ${bytes.length + 1}`));
    }
  });

  it(
    'unknown-version: version 0 and 1 (the format before the 2-bit atomo-entry codes), ' +
      'even when the rest is short',
    () => {
      rejectsPatched(dense(2, 2), (v) => v.setUint8(VERSION, 1), 'unknown-version', /version 1/);
      rejectsPatched(dense(2, 2), (v) => v.setUint8(VERSION, 0), 'unknown-version', /version 0/);
      rejects(Uint8Array.of(7), 'unknown-version');
    },
  );

  it('unknown-scheme: the first id past the known ones (the schemes and qsgd-elias), and 255', () => {
    const next = SCHEME_BY_ID.length;
    expect(next).toBe(SCHEME_NAMES.length + 1);
    rejectsPatched(dense(2, 2), (v) => v.setUint8(SCHEME, next), 'unknown-scheme', new RegExp(`scheme id ${next}`));
    rejectsPatched(dense(2, 2), (v) => v.setUint8(SCHEME, 255), 'unknown-scheme', /scheme id 255/);
  });

  it('bad-shape: zero rows or zero cols', () => {
    rejectsPatched(dense(2, 2), (v) => v.setUint32(ROWS, 0, true), 'bad-shape', /0×2/);
    rejectsPatched(dense(2, 2), (v) => v.setUint32(COLS, 0, true), 'bad-shape', /2×0/);
  });

  it('too-large: a shape above the default limit, before reading (or allocating) the body', () => {
    // 5000×5000 = 25M > 16M, with a 16-byte message.
    const huge = patched(dense(2, 2), (v) => {
      v.setUint32(ROWS, 5000, true);
      v.setUint32(COLS, 5000, true);
    });
    rejects(huge, 'too-large', /5000×5000 has 25000000 entries, above the limit of 16777216/);
    rejectsPatched(dense(2, 2), (v) => v.setUint32(ROWS, 0xffffffff, true), 'too-large');
  });

  it('too-large: a shape above a caller-set maxElements', () => {
    rejects(encodeLayer(dense(10, 10), 0), 'too-large', /above the limit of 99/, { maxElements: 99 });
    expect(() => decodeLayer(encodeLayer(dense(10, 10), 0), { maxElements: 100 })).not.toThrow();
  });

  it('shape-mismatch: a shape other than expectedShape', () => {
    rejects(encodeLayer(dense(3, 2), 0), 'shape-mismatch', /got shape 3×2, expected 2×3/, { expectedShape: [2, 3] });
  });

  it('layer-mismatch: a layer other than expectedLayer', () => {
    rejects(encodeLayer(dense(3, 2), 4), 'layer-mismatch', /got layer 4, expected layer 5/, { expectedLayer: 5 });
  });

  it('count-out-of-range: more svd atoms than min(rows, cols)', () => {
    // 3×4 allows 3 atoms; claim 4 and supply the bytes, so only the count is wrong.
    const three = encodeLayer(spectral(3, 4, 3), 0);
    const bytes = new Uint8Array(three.length + 4 * (3 + 4 + 1));
    bytes.set(three);
    new DataView(bytes.buffer).setUint32(BODY, 4, true);
    rejects(bytes, 'count-out-of-range', /4 atoms, more than min\(rows, cols\) = 3/);
  });

  it('count-out-of-range: a PowerSGD rank above min(rows, cols)', () => {
    const three = encodeLayer(powersgd(3, 4, 3), 0);
    const bytes = new Uint8Array(three.length + 4 * (3 + 4));
    bytes.set(three);
    new DataView(bytes.buffer).setUint32(BODY, 4, true);
    rejects(bytes, 'count-out-of-range', /powersgd layer 0 .*rank 4, more than min\(rows, cols\) = 3/);
  });

  it('non-finite: NaN or Infinity in PowerSGD factors', () => {
    // powersgd(3, 4, 2): rank, then P (2·3 floats), Q (2·4 floats).
    const p = BODY + 4;
    const q = p + 4 * 6;
    rejectsPatched(powersgd(3, 4, 2), (d) => d.setFloat32(p + 4 * 5, NaN, true), 'non-finite', /p\[5\] is NaN/);
    rejectsPatched(
      powersgd(3, 4, 2),
      (d) => d.setFloat32(q + 4 * 7, -Infinity, true),
      'non-finite',
      /q\[7\] is -Infinity/,
    );
  });

  it('count-out-of-range: more entries than rows·cols', () => {
    rejectsPatched(
      entry([1]),
      (v) => v.setUint32(BODY, 21, true),
      'count-out-of-range',
      /21 entries for a layer of 20/,
    );
  });

  it('atomo-dct: the sparse body rules, in messages that name atomo-dct', () => {
    rejectsPatched(dct([0, 19]), (v) => v.setUint8(BODY + 5, 19), 'index-out-of-range', /atomo-dct layer 0 .*index 20/);
    expectCodecError(() => encodeLayer(dct([3, 3]), 0), 'indices-unsorted', /^atomo-dct \(4×5\)/);
    expectCodecError(() => encodeLayer(dct([20]), 0), 'index-out-of-range', /^atomo-dct/);
  });

  it("bad-decomposition: atomo-auto atoms of no decomposition, and the atoms' own rules in their own words", () => {
    const auto = (atoms: AtomSample): LayerSample => ({ scheme: 'atomo-auto', shape: atoms.shape, atoms });
    // The byte after the header names the decomposition: 1, 2 or 5; not dense (0), QSGD (3), TernGrad (4), PowerSGD
    // (6), itself (7).
    for (const id of [0, 3, 4, 6, 7, 255]) {
      rejects(
        patched(auto(entry([0, 7]) as AtomSample), (v) => v.setUint8(BODY, id)),
        'bad-decomposition',
        new RegExp(
          `atomo-auto layer 0 .*decomposition id ${id}, ` +
            `expected 1 \\(atomo-entry\\), 2 \\(atomo-svd\\), 5 \\(atomo-dct\\)`,
        ),
      );
    }
    // The spectral atoms' count after the tag.
    rejectsPatched(
      auto(spectral(3, 4, 2) as AtomSample),
      (v) => v.setUint32(BODY + 1, 4, true),
      'count-out-of-range',
      /atomo-svd layer 0 \(3×4\): 4 atoms, more than min\(rows, cols\) = 3/,
    );
    rejectsPatched(
      auto(dct([0, 19]) as AtomSample),
      (v) => v.setUint8(BODY + 6, 19),
      'index-out-of-range',
      /atomo-dct layer 0 .*index 20/,
    );
    // Nothing after the tag.
    rejects(encodeLayer(auto(entry([0]) as AtomSample), 0).subarray(0, BODY + 1), 'truncated');
  });

  it('index-out-of-range: an entry index at rows·cols', () => {
    // 4×5 layer: index 19 is the last valid one; a first delta of 20 points past it.
    rejectsPatched(
      entry([19]),
      (v) => v.setUint8(BODY + 4, 20),
      'index-out-of-range',
      /index 20 .* out of range for 20 entries/,
    );
    // The second index: 0, then delta 19 → 0 + 1 + 19 = 20.
    rejectsPatched(entry([0, 1]), (v) => v.setUint8(BODY + 5, 19), 'index-out-of-range', /index 20 \(entry 1\)/);
  });

  it('bad-varint: an overlong (non-canonical) index', () => {
    // Index 1 written as 0x81 0x00 instead of 0x01; shape large enough that only the varint is wrong.
    const bytes = Uint8Array.of(2, 1, 0, 0, 10, 0, 0, 0, 10, 0, 0, 0, 1, 0, 0, 0, 0x81, 0x00, 0, 0, 0x80, 0x3f);
    rejects(bytes, 'bad-varint', /overlong/);
  });

  it('bad-varint: an index wider than 32 bits', () => {
    const fifth = Uint8Array.of(
      2,
      1,
      0,
      0,
      10,
      0,
      0,
      0,
      10,
      0,
      0,
      0,
      1,
      0,
      0,
      0,
      0xff,
      0xff,
      0xff,
      0xff,
      0x10,
      0,
      0,
      0x80,
      0x3f,
    );
    rejects(fifth, 'bad-varint', /32 bits/);
    const sixBytes = Uint8Array.of(
      2,
      1,
      0,
      0,
      10,
      0,
      0,
      0,
      10,
      0,
      0,
      0,
      1,
      0,
      0,
      0,
      0xff,
      0xff,
      0xff,
      0xff,
      0xff,
      0x01,
      0,
      0,
      0x80,
      0x3f,
    );
    rejects(sixBytes, 'bad-varint');
  });

  it('non-finite: NaN or Infinity in dense values', () => {
    rejectsPatched(dense(2, 2), (v) => v.setFloat32(BODY + 4, NaN, true), 'non-finite', /values\[1\] is NaN/);
    rejectsPatched(
      dense(2, 2),
      (v) => v.setFloat32(BODY + 12, -Infinity, true),
      'non-finite',
      /values\[3\] is -Infinity/,
    );
  });

  it('non-finite: Infinity in an own entry value; bad-value: an infinite or negative τ', () => {
    // count (4) + three one-byte varints (3) + τ (4) + one code byte, then entry 2's own value.
    const mixed: LayerSample = {
      scheme: 'atomo-entry',
      shape: [4, 5],
      indices: Uint32Array.of(0, 7, 19),
      values: Float32Array.of(1, -1, 2),
    };
    rejectsPatched(mixed, (v) => v.setFloat32(BODY + 12, Infinity, true), 'non-finite', /values\[2\] is Infinity/);
    rejectsPatched(mixed, (v) => v.setFloat32(BODY + 7, Infinity, true), 'bad-value', /τ is Infinity/);
    rejectsPatched(mixed, (v) => v.setFloat32(BODY + 7, -1, true), 'bad-value', /τ is -1/);
  });

  it('bad-value: entry code 11, and a τ that is not the shared magnitude (non-canonical)', () => {
    // entry([0, 7, 19]): every value 1, codes 00 00 00 in the byte at BODY + 11.
    rejectsPatched(
      entry([0, 7, 19]),
      (v) => v.setUint8(BODY + 11, 0b11 << 2),
      'bad-value',
      /entry 1 has the invalid code 11/,
    );
    // Entry 2's own value rewritten to −1: it now shares τ's magnitude, so the encoder would have coded it −τ.
    const mixed: LayerSample = {
      scheme: 'atomo-entry',
      shape: [4, 5],
      indices: Uint32Array.of(0, 7, 19),
      values: Float32Array.of(1, -1, 2),
    };
    rejectsPatched(
      mixed,
      (v) => v.setFloat32(BODY + 12, -1, true),
      'bad-value',
      /not the magnitude most entries share/,
    );
  });

  it('nonzero-padding: bits after the last entry code', () => {
    rejectsPatched(entry([0, 7, 19]), (v) => v.setUint8(BODY + 11, 0b01 << 6), 'nonzero-padding');
  });

  it('non-finite: NaN in svd u, v and scales', () => {
    // spectral(3, 4, 2): k, then U (2·3 floats), V (2·4 floats), scales (2 floats).
    const u = BODY + 4;
    const v = u + 4 * 6;
    const s = v + 4 * 8;
    rejectsPatched(spectral(3, 4, 2), (d) => d.setFloat32(u + 4 * 5, NaN, true), 'non-finite', /u\[5\] is NaN/);
    rejectsPatched(spectral(3, 4, 2), (d) => d.setFloat32(v, NaN, true), 'non-finite', /v\[0\] is NaN/);
    rejectsPatched(
      spectral(3, 4, 2),
      (d) => d.setFloat32(s + 4, Infinity, true),
      'non-finite',
      /scales\[1\] is Infinity/,
    );
  });

  it('non-finite: NaN qsgd norm and infinite terngrad scaler', () => {
    rejectsPatched(qsgd(5), (v) => v.setFloat32(BODY + 6, NaN, true), 'non-finite', /norm is NaN/);
    rejectsPatched(terngrad(5), (v) => v.setFloat32(BODY, Infinity, true), 'non-finite', /scaler is Infinity/);
  });

  it('negative-scale: negative qsgd norm and terngrad scaler', () => {
    rejectsPatched(qsgd(5), (v) => v.setFloat32(BODY + 6, -1, true), 'negative-scale', /norm is -1/);
    rejectsPatched(terngrad(5), (v) => v.setFloat32(BODY, -0.5, true), 'negative-scale', /scaler is -0.5/);
  });

  it('bad-levels: qsgd with s = 0', () => {
    rejectsPatched(qsgd(5), (v) => v.setUint16(BODY, 0, true), 'bad-levels', /levels s = 0/);
  });

  it('bad-bucket: a qsgd bucket size above 2³⁰', () => {
    rejectsPatched(qsgd(5), (v) => v.setUint32(BODY + 2, 2 ** 31, true), 'bad-bucket', /bucket size d = 2147483648/);
  });

  it('level-out-of-range: a qsgd level above s', () => {
    // s = 4: 4-bit codes; entry 1 (high nibble of the first packed byte) gets level 5.
    rejectsPatched(
      qsgd(5),
      (v) => v.setUint8(BODY + 10, 5 << 5),
      'level-out-of-range',
      /entry 1 has level 5, above s = 4/,
    );
    // s = 4 → 3 level bits; 7 is the largest they can hold.
    rejectsPatched(qsgd(5), (v) => v.setUint8(BODY + 10, 7 << 1), 'level-out-of-range', /entry 0 has level 7/);
  });

  it('qsgd-elias: a valid hand-made stream decodes (the helper below is right)', () => {
    // count 2: γ(3) = 011; gap γ(2) = 010, sign 1, level γ(3) = 011; gap γ(3) = 011, sign 0, level γ(1) = 1
    const decoded = decodeLayer(eliasMessage(6, '011 010 1 011 011 0 1')).sample;
    expect(decoded.scheme === 'qsgd' && [Array.from(decoded.level), Array.from(decoded.negative)]).toEqual([
      [0, 3, 0, 0, 1, 0],
      [0, 1, 0, 0, 0, 0],
    ]);
  });

  it('truncated: a qsgd-elias stream cut inside a code, or missing the later buckets', () => {
    // count 2, then the first gap, sign and level, then the second gap's γ cut after its leading zero.
    rejects(eliasMessage(6, '011 010 1 011 0'), 'truncated', /Elias stream needs more bits/);
    // Only the first of two buckets: the input ends where bucket 1's count should start.
    rejects(eliasMessage(8, '010 1 0 1 0000', 4), 'truncated', /qsgd-elias layer 0 \(1×8\) Elias stream/);
    // No stream at all.
    rejects(eliasMessage(6, ''), 'truncated');
  });

  it('count-out-of-range: a qsgd-elias bucket claiming more non-zero levels than entries', () => {
    // 7 levels in a bucket of 6: γ(8) = 0001000.
    rejects(eliasMessage(6, '0001000'), 'count-out-of-range', /bucket 0 says 7 non-zero levels, it has 6 entries/);
    // Buckets of 4 over 6 entries: the short last bucket of 2 claims 3.
    rejects(eliasMessage(6, '1 00100', 4), 'count-out-of-range', /bucket 1 says 3 non-zero levels, it has 2/);
  });

  it('index-out-of-range: a qsgd-elias gap past its bucket’s end', () => {
    // One level, gap 7 (γ = 00111) in a bucket of 6 entries: position 6.
    rejects(eliasMessage(6, '010 00111 0 1'), 'index-out-of-range', /level 0 falls at 6, past its 6 entries/);
    // Two levels: gaps 5 then 1 reach position 5 (fine), gaps 5 then 2 reach 6.
    expect(() => decodeLayer(eliasMessage(6, '011 00101 0 1 1 0 1'))).not.toThrow();
    rejects(eliasMessage(6, '011 00101 0 1 010 0 1'), 'index-out-of-range', /falls at 6/);
  });

  it('level-out-of-range: a qsgd-elias level above s', () => {
    // s = 4; level 5 = γ 00101.
    rejects(eliasMessage(6, '010 1 0 00101'), 'level-out-of-range', /entry 0 has level 5, above s = 4/);
  });

  it('bad-elias: a γ code with more than 30 leading zeros; a stream of zeros never hangs', () => {
    rejects(
      eliasMessage(6, '0'.repeat(31) + '1' + '0'.repeat(31)),
      'bad-elias',
      /count has more than 30 leading zeros/,
    );
    // A huge layer whose stream is all zero bytes: refused at the 31st zero.
    const zeros = eliasMessage(1 << 20, '0'.repeat(8 * 4096));
    rejects(zeros, 'bad-elias');
    // 30 zeros are a valid γ length, but the count it gives is then far above the bucket.
    rejects(eliasMessage(6, '0'.repeat(30) + '1' + '0'.repeat(30)), 'count-out-of-range');
  });

  it('nonzero-padding and trailing-bytes: after a complete qsgd-elias stream', () => {
    // count 0 is γ(1) = 1; a set bit after it is padding.
    rejects(eliasMessage(6, '1 0 1'), 'nonzero-padding');
    expect(() => decodeLayer(eliasMessage(6, '1 000 0000'))).not.toThrow();
    // A whole zero byte after the stream's last byte is not padding: it is a byte too many.
    rejects(eliasMessage(6, '1 0000000 00000000'), 'trailing-bytes');
  });

  it('bad-value: terngrad code 11', () => {
    rejectsPatched(
      terngrad(5),
      (v) => v.setUint8(BODY + 4, 0b11 << 4),
      'bad-value',
      /entry 2 has the invalid ternary code 11/,
    );
  });

  it('nonzero-padding: bits after the last qsgd or terngrad entry', () => {
    // qsgd(5) at 4 bits: 20 bits, so the top nibble of the third byte is padding.
    rejectsPatched(qsgd(5), (v) => v.setUint8(BODY + 10 + 2, 0x10), 'nonzero-padding');
    // terngrad(5): 10 bits, so bits 2..7 of the second byte are padding.
    rejectsPatched(terngrad(5), (v) => v.setUint8(BODY + 4 + 1, 0x80), 'nonzero-padding');
    // An 11 pattern in the padding is still padding, not an invalid entry 5.
    rejectsPatched(terngrad(5), (v) => v.setUint8(BODY + 4 + 1, 0b1100), 'nonzero-padding');
  });
});

describe('encodeLayer rejects', () => {
  it('unknown-scheme: a sample with an unknown scheme name', () => {
    const bogus = { scheme: 'gzip', shape: [1, 1], values: new Float32Array(1) } as unknown as LayerSample;
    expectCodecError(() => encodeLayer(bogus, 0), 'unknown-scheme', /gzip/);
  });

  it('bad-decomposition, length-mismatch: atomo-auto atoms of another scheme or another shape', () => {
    const bogus = { scheme: 'atomo-auto', shape: [1, 5], atoms: terngrad(5) } as unknown as LayerSample;
    expectCodecError(() => encodeLayer(bogus, 0), 'bad-decomposition', /atomo-auto \(1×5\): atoms of "terngrad"/);
    const missing = { scheme: 'atomo-auto', shape: [1, 5] } as unknown as LayerSample;
    expectCodecError(() => encodeLayer(missing, 0), 'bad-decomposition', /atoms of undefined/);
    const otherShape: LayerSample = { scheme: 'atomo-auto', shape: [5, 4], atoms: entry([0, 7]) as AtomSample };
    expectCodecError(() => encodeLayer(otherShape, 0), 'length-mismatch', /atoms of shape 4×5, expected the layer's/);
  });

  it('bad-layer: layer indices outside 0..65535 or not integers', () => {
    for (const layer of [-1, 65536, 1.5, NaN]) expectCodecError(() => encodeLayer(dense(1, 1), layer), 'bad-layer');
  });

  it('bad-shape: zero, fractional or beyond-u32 dimensions', () => {
    const shapes: [number, number][] = [
      [0, 3],
      [3, 0],
      [1.5, 2],
      [2 ** 32, 1],
    ];
    for (const shape of shapes) {
      expectCodecError(
        () =>
          encodeLayer(
            {
              scheme: 'atomo-svd',
              shape,
              count: 0,
              u: new Float32Array(),
              v: new Float32Array(),
              scales: new Float32Array(),
            },
            0,
          ),
        'bad-shape',
      );
    }
  });

  it('too-large: rows·cols above the codec ceiling of 2^30', () => {
    const sample: LayerSample = {
      scheme: 'atomo-svd',
      shape: [2 ** 16, 2 ** 15],
      count: 0,
      u: new Float32Array(),
      v: new Float32Array(),
      scales: new Float32Array(),
    };
    expectCodecError(() => encodeLayer(sample, 0), 'too-large', /ceiling/);
  });

  it('length-mismatch: arrays not matching the shape or count', () => {
    expectCodecError(
      () => encodeLayer({ scheme: 'none', shape: [2, 3], values: new Float32Array(5) }, 0),
      'length-mismatch',
      /values has length 5, expected 6/,
    );
    expectCodecError(
      () =>
        encodeLayer(
          { scheme: 'atomo-entry', shape: [2, 3], indices: Uint32Array.of(1, 2), values: new Float32Array(1) },
          0,
        ),
      'length-mismatch',
    );
    const svd = spectral(3, 4, 2);
    if (svd.scheme !== 'atomo-svd') throw new Error('unreachable');
    expectCodecError(
      () => encodeLayer({ ...svd, u: new Float32Array(5) }, 0),
      'length-mismatch',
      /u has length 5, expected 6/,
    );
    expectCodecError(() => encodeLayer({ ...svd, v: new Float32Array(9) }, 0), 'length-mismatch', /v has length 9/);
    expectCodecError(() => encodeLayer({ ...svd, scales: new Float32Array(1) }, 0), 'length-mismatch', /scales/);
    expectCodecError(() => encodeLayer({ ...qsgd(4), shape: [1, 5] } as LayerSample, 0), 'length-mismatch');
    expectCodecError(
      () => encodeLayer({ scheme: 'terngrad', shape: [2, 2], scaler: 1, ternary: new Int8Array(3) }, 0),
      'length-mismatch',
    );
  });

  it('count-out-of-range: too many svd atoms, a fractional count, too many entries', () => {
    expectCodecError(() => encodeLayer(spectral(2, 3, 3), 0), 'count-out-of-range', /0\.\.2/);
    expectCodecError(() => encodeLayer({ ...spectral(2, 3, 0), count: 0.5 } as LayerSample, 0), 'count-out-of-range');
    expectCodecError(() => encodeLayer(entry([0, 1, 2], [1, 2]), 0), 'count-out-of-range');
  });

  it('powersgd: a rank above min(rows, cols), a fractional rank, factors of the wrong length', () => {
    expectCodecError(() => encodeLayer(powersgd(2, 5, 3), 0), 'count-out-of-range', /^powersgd \(2×5\): rank 3/);
    expectCodecError(
      () => encodeLayer({ ...(powersgd(2, 5, 1) as PowerSgdSample), rank: 0.5 }, 0),
      'count-out-of-range',
    );
    expectCodecError(
      () => encodeLayer({ ...(powersgd(2, 5, 1) as PowerSgdSample), q: new Float32Array(4) }, 0),
      'length-mismatch',
      /q has length 4/,
    );
  });

  it('indices-unsorted: repeated or decreasing entry indices', () => {
    expectCodecError(() => encodeLayer(entry([3, 3]), 0), 'indices-unsorted', /index 3 at position 1/);
    expectCodecError(() => encodeLayer(entry([5, 2]), 0), 'indices-unsorted');
  });

  it('index-out-of-range: an entry index at rows·cols', () => {
    expectCodecError(() => encodeLayer(entry([2, 20]), 0), 'index-out-of-range', /index 20 out of range/);
  });

  it('non-finite: NaN values, infinite norm, a norm that overflows float32', () => {
    expectCodecError(
      () => encodeLayer({ scheme: 'none', shape: [1, 2], values: Float32Array.of(1, NaN) }, 0),
      'non-finite',
    );
    expectCodecError(
      () => encodeLayer({ ...spectral(2, 2, 1), scales: Float32Array.of(Infinity) } as LayerSample, 0),
      'non-finite',
    );
    expectCodecError(() => encodeLayer(qsgd(3, 4, Infinity), 0), 'non-finite');
    expectCodecError(() => encodeLayer(terngrad(3, 1e39), 0), 'non-finite', /scaler is Infinity/);
  });

  it('negative-scale: negative norm or scaler', () => {
    expectCodecError(() => encodeLayer(qsgd(3, 4, -1), 0), 'negative-scale');
    expectCodecError(() => encodeLayer(terngrad(3, -2), 0), 'negative-scale');
  });

  it('bad-levels: s = 0, s above 65535, fractional s', () => {
    for (const levels of [0, 65536, 2.5]) expectCodecError(() => encodeLayer(qsgd(3, levels), 0), 'bad-levels');
  });

  it('level-out-of-range: a level above s', () => {
    const sample = qsgd(3, 4);
    if (sample.scheme !== 'qsgd') throw new Error('unreachable');
    expectCodecError(
      () => encodeLayer({ ...sample, level: Uint16Array.of(0, 5, 0) }, 0),
      'level-out-of-range',
      /level\[1\] is 5/,
    );
  });

  it('bad-value: sign flag other than 0/1, ternary other than −1/0/+1', () => {
    const q = qsgd(3, 4);
    if (q.scheme !== 'qsgd') throw new Error('unreachable');
    expectCodecError(
      () => encodeLayer({ ...q, negative: Uint8Array.of(0, 0, 2) }, 0),
      'bad-value',
      /negative\[2\] is 2/,
    );
    expectCodecError(
      () => encodeLayer({ scheme: 'terngrad', shape: [1, 2], scaler: 1, ternary: Int8Array.of(0, 2) }, 0),
      'bad-value',
    );
  });
});
