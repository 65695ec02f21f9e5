/**
 * Scheme `atomo-entry` (id 1), entry-wise ATOMO. An unsaturated entry
 * (0 < p < 1) always sends λᵢ/pᵢ = ±τ, τ the water level, so the body sends
 * τ once and a sign per such entry; only the others (saturated, p = 1) carry
 * their own float32. Body:
 *   u32 count
 *   count varints: the first flat index as is, each later one as
 *                  index − previous − 1 (indices strictly increase, so ≥ 0)
 *   if count > 0:
 *     f32 τ ≥ 0    the magnitude most entries share (ties: the smallest)
 *     count 2-bit codes, LSB-first, zero-padded to a byte:
 *                  00 = +τ, 01 = −τ, 10 = own value follows, 11 refused
 *     own float32 values, in index order, for the entries coded 10
 * Body bytes: 4 + Σ varintLength(deltaᵢ) + (count > 0 ? 4 + ⌈count/4⌉ + 4·own : 0).
 * The encoding is canonical: the decoder refuses a τ that is not the
 * encoder's choice and an own value of magnitude τ. The codec carries any
 * finite values bit for bit (±0 included), τ-shared or not.
 *
 * Scheme `atomo-dct` (id 5), Fourier ATOMO, has the same body with DCT
 * coefficient indices in place of entry indices (sparseCodec below): its
 * unsaturated coefficients send ±τ too.
 */
import type { DctSample, EntrySample } from '../atomo/types';
import { BitReader, BitWriter, packedByteLength } from './bitpack';
import { checkFiniteArray, checkLength } from './checks';
import type { ByteReader, ByteWriter } from './cursor';
import { CodecError } from './errors';
import { readFloat32Block, writeFloat32Block } from './floats';
import { shapeText, where, type Header } from './header';
import { entryBodyBytes } from './sizes';
import type { SchemeCodec } from './scheme';
import { readVarint, varintLength, writeVarint } from './varint';

/** Smallest body of one entry: a one-byte varint (its 2-bit code is shared with three others). */
const MIN_ENTRY_BYTES = 1;
const CODE_PLUS = 0b00;
const CODE_MINUS = 0b01;
const CODE_OWN = 0b10;
const SIGN_BIT = 0x80000000;

/** How a sample's values split into ±τ and own values. */
interface Split {
  /** float32 bits of τ (sign clear). */
  readonly tauBits: number;
  readonly own: number;
}

const bits = new Uint32Array(1);
const asFloat = new Float32Array(bits.buffer);

/** float32 bit pattern of x (x already a float32). */
function bitsOf(x: number): number {
  asFloat[0] = x;
  return bits[0]!;
}

function floatOf(pattern: number): number {
  bits[0] = pattern;
  return asFloat[0]!;
}

/** τ: the magnitude (float32 bits, sign cleared) shared by the most values, the smallest on ties. */
function chooseTau(values: Float32Array): Split {
  const counts = new Map<number, number>();
  for (let i = 0; i < values.length; i++) {
    const magnitude = (bitsOf(values[i]!) & ~SIGN_BIT) >>> 0;
    counts.set(magnitude, (counts.get(magnitude) ?? 0) + 1);
  }
  let tauBits = 0;
  let best = 0;
  for (const [magnitude, n] of counts) {
    if (n > best || (n === best && magnitude < tauBits)) {
      best = n;
      tauBits = magnitude;
    }
  }
  return { tauBits, own: values.length - best };
}

/** A sample that is a sparse list of (flat index, value) pairs. */
type SparseSample = EntrySample | DctSample;

/** Encoder and decoder of sparse (index, value) samples of one scheme. */
function sparseCodec<S extends SparseSample>(scheme: S['scheme']): SchemeCodec<S> {
  return {
    bodyByteLength(sample: S, elements: number): number {
      const ctx = context(sample);
      const { indices, values } = sample;
      checkLength(ctx, 'values', values.length, indices.length, 'one value per index');
      if (indices.length > elements) {
        throw new CodecError('count-out-of-range', `${ctx}: ${indices.length} entries for a layer of ${elements}`);
      }
      // Walking the indices both validates their order and sums the varint sizes.
      let varintBytes = 0;
      let previous = -1;
      for (let i = 0; i < indices.length; i++) {
        const index = indices[i]!;
        if (index <= previous) {
          throw new CodecError(
            'indices-unsorted',
            `${ctx}: index ${index} at position ${i} does not exceed the previous index ${previous}`,
          );
        }
        if (index >= elements) {
          throw new CodecError(
            'index-out-of-range',
            `${ctx}: index ${index} out of range for a layer of ${elements} entries`,
          );
        }
        varintBytes += varintLength(index - previous - 1);
        previous = index;
      }
      return entryBodyBytes(indices.length, varintBytes, chooseTau(values).own);
    },

    encodeBody(sample: S, writer: ByteWriter): void {
      const { indices, values } = sample;
      checkFiniteArray(context(sample), 'values', values);
      writer.u32(indices.length);
      let previous = -1;
      for (let i = 0; i < indices.length; i++) {
        const index = indices[i]!;
        writeVarint(writer, index - previous - 1);
        previous = index;
      }
      if (indices.length === 0) return;
      const { tauBits, own } = chooseTau(values);
      writer.f32(floatOf(tauBits));
      const codes = new BitWriter(writer.bytes, writer.pos);
      const ownValues = new Float32Array(own);
      let o = 0;
      for (let i = 0; i < values.length; i++) {
        const pattern = bitsOf(values[i]!);
        if ((pattern & ~SIGN_BIT) >>> 0 === tauBits) {
          codes.write(pattern >>> 31 === 1 ? CODE_MINUS : CODE_PLUS, 2);
        } else {
          codes.write(CODE_OWN, 2);
          ownValues[o++] = values[i]!;
        }
      }
      writer.pos = codes.finish();
      writeFloat32Block(writer, ownValues);
    },

    decodeBody(reader: ByteReader, header: Header): S {
      const ctx = where(header);
      reader.need(4, 'entry count');
      const count = reader.u32();
      if (count > header.elements) {
        throw new CodecError('count-out-of-range', `${ctx}: ${count} entries for a layer of ${header.elements}`);
      }
      // Each entry needs at least one byte; checking that before allocating
      // keeps a short message from reserving a large array.
      reader.need(count * MIN_ENTRY_BYTES, `${count} entries (at least ${MIN_ENTRY_BYTES} byte each)`);
      const indices = new Uint32Array(count);
      let previous = -1;
      for (let i = 0; i < count; i++) {
        const index = previous + 1 + readVarint(reader, `${scheme} index`);
        if (index >= header.elements) {
          throw new CodecError(
            'index-out-of-range',
            `${ctx}: index ${index} (entry ${i}) out of range for ${header.elements} entries`,
          );
        }
        indices[i] = index;
        previous = index;
      }
      const values = new Float32Array(count);
      if (count > 0) {
        reader.need(4 + packedByteLength(count, 2), `τ and ${count} 2-bit codes`);
        const tau = reader.f32();
        const tauBits = bitsOf(tau);
        if (tauBits >>> 31 === 1 || !Number.isFinite(tau))
          throw new CodecError('bad-value', `${ctx}: τ is ${tau}, not a finite magnitude`);
        const codes = new BitReader(reader.bytes, reader.pos);
        const own: number[] = [];
        for (let i = 0; i < count; i++) {
          const code = codes.read(2);
          if (code === CODE_PLUS) values[i] = tau;
          else if (code === CODE_MINUS) values[i] = -tau;
          else if (code === CODE_OWN) own.push(i);
          else throw new CodecError('bad-value', `${ctx}: entry ${i} has the invalid code 11`);
        }
        reader.pos = codes.finish(`${ctx} entry codes`);
        reader.need(4 * own.length, `${own.length} own float32 values`);
        const ownValues = readFloat32Block(reader, own.length);
        own.forEach((i, o) => (values[i] = ownValues[o]!));
        checkFiniteArray(ctx, 'values', values);
        // Canonical: τ is what the encoder picks for these values.
        const chosen = chooseTau(values);
        if (chosen.tauBits !== tauBits || chosen.own !== own.length) {
          throw new CodecError(
            'bad-value',
            `${ctx}: τ = ${tau} is not the magnitude most entries share ` +
              `(the encoder would send ${floatOf(chosen.tauBits)})`,
          );
        }
      }
      // S is the one member of the union whose scheme is `scheme`.
      return { scheme, shape: [header.rows, header.cols], indices, values } as unknown as S;
    },
  };
}

/** Encoder and decoder of sparse entry-wise samples. */
export const entryCodec: SchemeCodec<EntrySample> = sparseCodec<EntrySample>('atomo-entry');

/** Encoder and decoder of Fourier ATOMO samples: the same body, DCT coefficient indices. */
export const dctCodec: SchemeCodec<DctSample> = sparseCodec<DctSample>('atomo-dct');

function context(sample: SparseSample): string {
  return `${sample.scheme} (${shapeText(sample.shape[0], sample.shape[1])})`;
}
