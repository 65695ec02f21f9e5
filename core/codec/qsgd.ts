/**
 * Scheme `qsgd` (id 3), s-level QSGD with buckets. Body:
 *   u16 levels       s, 1..65535
 *   u32 bucket size  d, 0..2³⁰ (0: the whole layer is one bucket)
 *   f32 norms        ‖g_k‖₂ of each of the B = ⌈m·n/d⌉ buckets (B = 1 when d = 0),
 *                    finite and ≥ 0
 *   packed entries   per entry, in order, a (1 + b)-bit code with
 *                    b = ⌈log2(s+1)⌉: bit 0 is the sign (1 = negative),
 *                    bits 1..b the level 0..s. LSB-first, zero padded to a byte.
 * Body bytes: 2 + 4 + 4·B + ⌈m·n·(1 + b)/8⌉.
 */
import { MAX_BUCKET_SIZE, bucketCount } from '../atomo/schemes/qsgd';
import { MAX_LEVELS } from '../atomo/schemes/scheme';
import type { QsgdSample } from '../atomo/types';
import { checkLength, checkScale } from './checks';
import type { ByteReader, ByteWriter } from './cursor';
import { BitReader, BitWriter, packedByteLength } from './bitpack';
import { CodecError } from './errors';
import { shapeText, where, type Header } from './header';
import type { SchemeCodec } from './scheme';
import { levelBits, qsgdBodyBytes } from './sizes';

/** Encoder and decoder of s-level QSGD samples. */
export const qsgdCodec: SchemeCodec<QsgdSample> = {
  bodyByteLength(sample: QsgdSample, elements: number): number {
    const ctx = context(sample);
    checkLevels(ctx, sample.levels);
    checkLength(ctx, 'negative', sample.negative.length, elements, 'rows·cols');
    checkLength(ctx, 'level', sample.level.length, elements, 'rows·cols');
    checkBucketSize(ctx, sample.bucketSize);
    checkLength(ctx, 'norms', sample.norms.length, bucketCount(elements, sample.bucketSize), 'buckets');
    return qsgdBodyBytes(elements, sample.levels, sample.bucketSize);
  },

  encodeBody(sample: QsgdSample, writer: ByteWriter, elements: number): void {
    const ctx = context(sample);
    for (const norm of sample.norms) checkScale(ctx, 'norm', norm);
    const s = sample.levels;
    const width = 1 + levelBits(s);
    const { negative, level } = sample;
    writer.u16(s);
    writer.u32(sample.bucketSize);
    for (const norm of sample.norms) writer.f32(norm);
    const bits = new BitWriter(writer.bytes, writer.pos);
    for (let i = 0; i < elements; i++) {
      const sign = negative[i]!;
      const l = level[i]!;
      if (sign > 1) {
        throw new CodecError('bad-value', `${ctx}: negative[${i}] is ${sign}, expected 0 or 1`);
      }
      if (l > s) {
        throw new CodecError('level-out-of-range', `${ctx}: level[${i}] is ${l}, above s = ${s}`);
      }
      bits.write(sign | (l << 1), width);
    }
    writer.pos = bits.finish();
  },

  decodeBody(reader: ByteReader, header: Header): QsgdSample {
    const ctx = where(header);
    reader.need(6, 'levels and bucket size');
    const s = reader.u16();
    const bucketSize = reader.u32();
    checkLevels(ctx, s);
    checkBucketSize(ctx, bucketSize);
    const n = header.elements;
    const buckets = bucketCount(n, bucketSize);
    reader.need(4 * buckets, `${buckets} bucket norms`);
    const norms = new Float32Array(buckets);
    for (let k = 0; k < buckets; k++) {
      norms[k] = reader.f32();
      checkScale(ctx, 'norm', norms[k]!);
    }
    const width = 1 + levelBits(s);
    reader.need(packedByteLength(n, width), `${n} packed ${width}-bit entries`);
    const negative = new Uint8Array(n);
    const level = new Uint16Array(n);
    const bits = new BitReader(reader.bytes, reader.pos);
    for (let i = 0; i < n; i++) {
      const code = bits.read(width);
      const l = code >>> 1;
      if (l > s) {
        throw new CodecError('level-out-of-range', `${ctx}: entry ${i} has level ${l}, above s = ${s}`);
      }
      negative[i] = code & 1;
      level[i] = l;
    }
    reader.pos = bits.finish(ctx);
    return { scheme: 'qsgd', shape: [header.rows, header.cols], levels: s, bucketSize, norms, negative, level };
  },
};

function checkLevels(ctx: string, levels: number): void {
  if (!Number.isInteger(levels) || levels < 1 || levels > MAX_LEVELS) {
    throw new CodecError('bad-levels', `${ctx}: levels s = ${levels}, expected an integer in 1..${MAX_LEVELS}`);
  }
}

function checkBucketSize(ctx: string, bucketSize: number): void {
  if (!Number.isInteger(bucketSize) || bucketSize < 0 || bucketSize > MAX_BUCKET_SIZE) {
    throw new CodecError(
      'bad-bucket',
      `${ctx}: bucket size d = ${bucketSize}, expected an integer in 0..${MAX_BUCKET_SIZE}`,
    );
  }
}

function context(sample: QsgdSample): string {
  return `qsgd (${shapeText(sample.shape[0], sample.shape[1])})`;
}
