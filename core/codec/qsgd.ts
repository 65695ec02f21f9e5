/**
 * Scheme `qsgd`, s-level QSGD with buckets, in two codings of its levels:
 * fixed-width (wire id 3) and the QSGD paper's Elias coding (wire id 8,
 * QSGD_ELIAS_ID). Body of id 3:
 *   u16 levels       s, 1..65535
 *   u32 bucket size  d, 0..2³⁰ (0: the whole layer is one bucket)
 *   f32 norms        ‖g_k‖₂ of each of the B = ⌈m·n/d⌉ buckets (B = 1 when d = 0),
 *                    finite and ≥ 0
 *   packed entries   per entry, in order, a (1 + b)-bit code with
 *                    b = ⌈log2(s+1)⌉: bit 0 is the sign (1 = negative),
 *                    bits 1..b the level 0..s. LSB-first, zero padded to a byte.
 * Body bytes: 2 + 4 + 4·B + ⌈m·n·(1 + b)/8⌉.
 * Body of id 8: the same levels, bucket size and norms, then a bit stream
 * (elias.ts), per bucket: γ(K + 1), K its non-zero levels, then for each of
 * them in order γ(gap) (its index in the bucket less the previous one's, −1
 * before the first), a sign bit (1 = negative) and γ(level); zero padded to a
 * byte. A level-0 entry sends nothing, its sign included: it decodes as +0.
 * Body bytes: sizes.ts qsgdEliasBodyBytes.
 */
import { MAX_BUCKET_SIZE, bucketCount } from '../atomo/schemes/qsgd';
import { MAX_LEVELS } from '../atomo/schemes/scheme';
import type { QsgdCoding, QsgdSample } from '../atomo/types';
import { checkLength, checkScale } from './checks';
import type { ByteReader, ByteWriter } from './cursor';
import { BitReader, BitWriter, packedByteLength } from './bitpack';
import { GammaReader, GammaWriter } from './elias';
import { CodecError } from './errors';
import { QSGD_ELIAS_ID, shapeText, where, type Header } from './header';
import type { SchemeCodec } from './scheme';
import { levelBits, qsgdBodyBytes, qsgdEliasBodyBytes } from './sizes';

/** Encoder and decoder of s-level QSGD samples. */
export const qsgdCodec: SchemeCodec<QsgdSample> = {
  bodyByteLength(sample: QsgdSample, elements: number): number {
    const ctx = context(sample);
    checkLevels(ctx, sample.levels);
    checkLength(ctx, 'negative', sample.negative.length, elements, 'rows·cols');
    checkLength(ctx, 'level', sample.level.length, elements, 'rows·cols');
    checkBucketSize(ctx, sample.bucketSize);
    checkLength(ctx, 'norms', sample.norms.length, bucketCount(elements, sample.bucketSize), 'buckets');
    checkCoding(ctx, sample.coding);
    return sample.coding === 'elias'
      ? qsgdEliasBodyBytes(sample.level, sample.bucketSize)
      : qsgdBodyBytes(elements, sample.levels, sample.bucketSize);
  },

  encodeBody(sample: QsgdSample, writer: ByteWriter, elements: number): void {
    const ctx = context(sample);
    for (const norm of sample.norms) checkScale(ctx, 'norm', norm);
    const s = sample.levels;
    const { negative, level } = sample;
    writer.u16(s);
    writer.u32(sample.bucketSize);
    for (const norm of sample.norms) writer.f32(norm);
    for (let i = 0; i < elements; i++) {
      const sign = negative[i]!;
      const l = level[i]!;
      if (sign > 1) {
        throw new CodecError('bad-value', `${ctx}: negative[${i}] is ${sign}, expected 0 or 1`);
      }
      if (l > s) {
        throw new CodecError('level-out-of-range', `${ctx}: level[${i}] is ${l}, above s = ${s}`);
      }
    }
    if (sample.coding === 'elias') {
      writer.pos = writeElias(sample, writer.bytes, writer.pos, elements);
      return;
    }
    const width = 1 + levelBits(s);
    const bits = new BitWriter(writer.bytes, writer.pos);
    for (let i = 0; i < elements; i++) bits.write(negative[i]! | (level[i]! << 1), width);
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
    const shape = [header.rows, header.cols] as const;
    if (header.id === QSGD_ELIAS_ID) {
      const { negative, level } = readElias(reader, ctx, s, bucketSize, n);
      return { scheme: 'qsgd', shape, levels: s, coding: 'elias', bucketSize, norms, negative, level };
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
    return { scheme: 'qsgd', shape, levels: s, coding: 'fixed', bucketSize, norms, negative, level };
  },
};

/** Writes the Elias-coded stream of a sample the encoder has checked; returns the offset after it. */
function writeElias(sample: QsgdSample, bytes: Uint8Array, offset: number, elements: number): number {
  const { negative, level } = sample;
  const d = sample.bucketSize === 0 ? elements : sample.bucketSize;
  const bits = new GammaWriter(bytes, offset);
  for (let start = 0; start < elements; start += d) {
    const end = Math.min(elements, start + d);
    let count = 0;
    for (let i = start; i < end; i++) if (level[i] !== 0) count++;
    bits.gamma(count + 1);
    let previous = start - 1;
    for (let i = start; i < end; i++) {
      const l = level[i]!;
      if (l === 0) continue;
      bits.gamma(i - previous);
      bits.bit(negative[i]!);
      bits.gamma(l);
      previous = i;
    }
  }
  return bits.finish();
}

/**
 * Reads the Elias-coded stream of `n` entries in buckets of `bucketSize`, to the end of the input. The non-zero levels
 * are collected first (at most one per 3 bits of input), so the m·n arrays are allocated only for a stream that parsed.
 */
function readElias(
  reader: ByteReader,
  ctx: string,
  s: number,
  bucketSize: number,
  n: number,
): { negative: Uint8Array; level: Uint16Array } {
  const d = bucketSize === 0 ? n : bucketSize;
  const most = Math.min(n, Math.floor((8 * reader.remaining) / 3));
  const positions = new Uint32Array(most);
  const signs = new Uint8Array(most);
  const values = new Uint16Array(most);
  let kept = 0;
  const bits = new GammaReader(reader.bytes, reader.pos, `${ctx} Elias stream`);
  for (let start = 0, k = 0; start < n; start += d, k++) {
    const length = Math.min(n, start + d) - start;
    const count = bits.gamma(`bucket ${k}'s count`) - 1;
    if (count > length) {
      throw new CodecError(
        'count-out-of-range',
        `${ctx}: bucket ${k} says ${count} non-zero levels, it has ${length} entries`,
      );
    }
    let previous = -1;
    for (let j = 0; j < count; j++) {
      const position = previous + bits.gamma(`bucket ${k}'s gap ${j}`);
      if (position >= length) {
        throw new CodecError(
          'index-out-of-range',
          `${ctx}: bucket ${k}'s non-zero level ${j} falls at ${position}, past its ${length} entries`,
        );
      }
      const sign = bits.bit();
      const l = bits.gamma(`bucket ${k}'s level ${j}`);
      if (l > s) {
        throw new CodecError('level-out-of-range', `${ctx}: entry ${start + position} has level ${l}, above s = ${s}`);
      }
      // count ≤ length and one code takes ≥ 3 bits, so a stream that got here has room in the buffers.
      positions[kept] = start + position;
      signs[kept] = sign;
      values[kept] = l;
      kept++;
      previous = position;
    }
  }
  reader.pos = bits.finish();
  const negative = new Uint8Array(n);
  const level = new Uint16Array(n);
  for (let j = 0; j < kept; j++) {
    negative[positions[j]!] = signs[j]!;
    level[positions[j]!] = values[j]!;
  }
  return { negative, level };
}

function checkCoding(ctx: string, coding: QsgdCoding): void {
  if (coding !== 'elias' && coding !== 'fixed') {
    throw new CodecError('bad-value', `${ctx}: coding ${JSON.stringify(coding)}, expected "elias" or "fixed"`);
  }
}

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
