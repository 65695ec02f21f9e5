import { describe, expect, it } from 'vitest';
import { SCHEME_NAMES, type SchemeName } from '../atomo/types';
import { SCHEME_BY_ID } from './header';
import { CODEC_VERSION, CodecError, decodeLayer, encodeLayer, type CodecErrorCode } from './index';
import { seededRng, type Rng } from '../testing/seeded';
import { randomInt, randomSample, randomShape, toHex } from './testing/random-samples';

/** One fuzz case: any bytes must decode to a canonical message or throw CodecError. */
function check(bytes: Uint8Array, outcomes: Map<string, number>): void {
  let decoded;
  try {
    decoded = decodeLayer(bytes);
  } catch (error) {
    if (!(error instanceof CodecError))
      throw new Error(`non-CodecError for ${toHex(bytes)}: ${String(error)}`, { cause: error });
    outcomes.set(error.code, (outcomes.get(error.code) ?? 0) + 1);
    return;
  }
  // Whatever decodes is canonical: it re-encodes to exactly the input.
  expect(toHex(encodeLayer(decoded.sample, decoded.layer))).toBe(toHex(bytes));
  outcomes.set('ok', (outcomes.get('ok') ?? 0) + 1);
}

function validEncoding(rng: Rng): Uint8Array {
  const scheme: SchemeName = SCHEME_NAMES[randomInt(rng, 0, SCHEME_NAMES.length - 1)]!;
  return encodeLayer(randomSample(rng, scheme, randomShape(rng, 12)), randomInt(rng, 0, 3));
}

/** A copy of `bytes` with one random mutation. */
function mutate(rng: Rng, bytes: Uint8Array): Uint8Array {
  const out = bytes.slice();
  const at = randomInt(rng, 0, Math.max(0, out.length - 1));
  switch (randomInt(rng, 0, 6)) {
    case 0: // flip one bit
      if (out.length > 0) out[at]! ^= 1 << randomInt(rng, 0, 7);
      return out;
    case 1: // overwrite one byte
      if (out.length > 0) out[at] = randomInt(rng, 0, 255);
      return out;
    case 2: // truncate
      return out.subarray(0, randomInt(rng, 0, out.length));
    case 3: {
      // append random bytes
      const longer = new Uint8Array(out.length + randomInt(rng, 1, 8));
      longer.set(out);
      for (let i = out.length; i < longer.length; i++) longer[i] = randomInt(rng, 0, 255);
      return longer;
    }
    case 4: // mutate inside the header, where the structure lives
      out[randomInt(rng, 0, 11)] = randomInt(rng, 0, 255);
      return out;
    case 5: // small change to a header count or dimension
      out[randomInt(rng, 4, 15)]! += randomInt(rng, -1, 1);
      return out;
    default: // flip several bits
      for (let i = 0; i < 4 && out.length > 0; i++)
        out[randomInt(rng, 0, out.length - 1)]! ^= 1 << randomInt(rng, 0, 7);
      return out;
  }
}

describe('fuzz', () => {
  it(
    'random bytes, random bytes behind a valid prefix, and mutated encodings ' +
      'decode canonically or throw CodecError',
    () => {
      const rng = seededRng(20240601);
      const outcomes = new Map<string, number>();
      for (let i = 0; i < 500; i++) {
        const length = randomInt(rng, 0, 64);
        check(
          Uint8Array.from({ length }, () => randomInt(rng, 0, 255)),
          outcomes,
        );
      }
      for (let i = 0; i < 1000; i++) {
        // The current version, a known scheme and a small shape, then random bytes: reaches the body decoders.
        const body = randomInt(rng, 0, 80);
        const bytes = new Uint8Array(12 + body);
        const view = new DataView(bytes.buffer);
        view.setUint8(0, CODEC_VERSION);
        view.setUint8(1, randomInt(rng, 0, SCHEME_BY_ID.length - 1));
        view.setUint32(4, randomInt(rng, 1, 5), true);
        view.setUint32(8, randomInt(rng, 1, 5), true);
        for (let j = 12; j < bytes.length; j++) bytes[j] = rng() < 0.3 ? 0 : randomInt(rng, 0, 255);
        check(bytes, outcomes);
      }
      for (let i = 0; i < 3000; i++) check(mutate(rng, validEncoding(rng)), outcomes);

      // The fuzz is only worth something if it reaches both outcomes and most rejection paths.
      expect(outcomes.get('ok') ?? 0).toBeGreaterThan(100);
      const reached: CodecErrorCode[] = [
        'truncated',
        'trailing-bytes',
        'unknown-version',
        'unknown-scheme',
        'bad-shape',
        'too-large',
        'count-out-of-range',
        'index-out-of-range',
        'non-finite',
        'negative-scale',
        'bad-levels',
        'level-out-of-range',
        'bad-value',
        'nonzero-padding',
        'bad-decomposition',
      ];
      for (const code of reached) expect(outcomes.get(code) ?? 0, `fuzz never produced ${code}`).toBeGreaterThan(0);
    },
  );
});
