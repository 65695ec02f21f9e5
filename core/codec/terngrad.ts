/**
 * Scheme `terngrad` (id 4), TernGrad. Body:
 *   f32 scaler       ‖g‖∞, finite and ≥ 0
 *   packed entries   2 bits each, in order: 00 = 0, 01 = +1, 10 = −1
 *                    (11 is invalid); LSB-first, 4 per byte (entry i in
 *                    bits 2(i mod 4)..2(i mod 4)+1 of byte ⌊i/4⌋), zero padded.
 * Body bytes: 4 + ⌈m·n/4⌉.
 * This is bitpack.ts's layout at width 2, written out byte by byte because
 * TernGrad is the scheme whose whole cost is this loop.
 */
import type { TernGradSample } from '../atomo/types';
import { packedByteLength } from './bitpack';
import { checkLength, checkScale } from './checks';
import type { ByteReader, ByteWriter } from './cursor';
import { CodecError } from './errors';
import { shapeText, where, type Header } from './header';
import type { SchemeCodec } from './scheme';
import { terngradBodyBytes } from './sizes';

const WIDTH = 2;
/** Per byte, the low bit of each 2-bit field. */
const LOW_BITS = 0x55;

/** Encoder and decoder of ternary samples. */
export const terngradCodec: SchemeCodec<TernGradSample> = {
  bodyByteLength(sample: TernGradSample, elements: number): number {
    checkLength(context(sample), 'ternary', sample.ternary.length, elements, 'rows·cols');
    return terngradBodyBytes(elements);
  },

  encodeBody(sample: TernGradSample, writer: ByteWriter, elements: number): void {
    const ctx = context(sample);
    checkScale(ctx, 'scaler', Math.fround(sample.scaler));
    const { ternary } = sample;
    writer.f32(sample.scaler);
    const out = writer.bytes;
    let pos = writer.pos;
    for (let first = 0; first < elements; first += 4) {
      const last = Math.min(first + 4, elements);
      let byte = 0;
      for (let i = first; i < last; i++) {
        const t = ternary[i]!;
        // Always false for valid input, so the branch predicts well.
        if (t < -1 || t > 1) {
          throw new CodecError('bad-value', `${ctx}: ternary[${i}] is ${t}, expected −1, 0 or +1`);
        }
        // Branch-free 0 → 00, +1 → 01, −1 → 10: random signs would defeat a predictor.
        const negative = t >>> 31;
        byte |= ((negative << 1) | (t & 1 & (negative ^ 1))) << (2 * (i - first));
      }
      out[pos++] = byte;
    }
    writer.pos = pos;
  },

  decodeBody(reader: ByteReader, header: Header): TernGradSample {
    const ctx = where(header);
    reader.need(4, 'scaler');
    const scaler = reader.f32();
    checkScale(ctx, 'scaler', scaler);
    const n = header.elements;
    const packedBytes = packedByteLength(n, WIDTH);
    reader.need(packedBytes, `${n} packed 2-bit entries`);
    const ternary = new Int8Array(n);
    const bytes = reader.bytes;
    const start = reader.pos;
    for (let b = 0; b < packedBytes; b++) {
      const byte = bytes[start + b]!;
      const first = 4 * b;
      // Padding first, so a set padding bit is never reported as an entry.
      const count = Math.min(4, n - first);
      if (count < 4 && byte >>> (2 * count) !== 0) {
        throw new CodecError(
          'nonzero-padding',
          `${ctx}: padding bits after the last entry are not zero (byte at offset ${start + b})`,
        );
      }
      // A field is 11 exactly when its low bit and its high bit are both set.
      if ((byte & (byte >>> 1) & LOW_BITS) !== 0) {
        throw new CodecError(
          'bad-value',
          `${ctx}: entry ${first + invalidField(byte)} has the invalid ternary code 11`,
        );
      }
      for (let j = 0; j < count; j++) {
        const code = (byte >>> (2 * j)) & 3;
        // Branch-free 00 → 0, 01 → +1, 10 → −1.
        ternary[first + j] = (code & 1) - (code >>> 1);
      }
    }
    reader.pos = start + packedBytes;
    return { scheme: 'terngrad', shape: [header.rows, header.cols], scaler, ternary };
  },
};

/** Position 0..3 of the first 11 field in a byte that has one. */
function invalidField(byte: number): number {
  let j = 0;
  while (((byte >>> (2 * j)) & 3) !== 3) j++;
  return j;
}

function context(sample: TernGradSample): string {
  return `terngrad (${shapeText(sample.shape[0], sample.shape[1])})`;
}
