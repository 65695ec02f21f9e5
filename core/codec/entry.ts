/**
 * Scheme `atomo-entry` (id 1), entry-wise ATOMO. Body:
 *   u32 count
 *   count varints: the first flat index as is, each later one as
 *                  index − previous − 1 (indices strictly increase, so ≥ 0)
 *   count float32: λᵢ/pᵢ for each index, in the same order (unaligned)
 * Body bytes: 4 + Σ varintLength(deltaᵢ) + 4·count.
 *
 * Scheme `atomo-dct` (id 5), Fourier ATOMO, has the same body with DCT
 * coefficient indices in place of entry indices (sparseCodec below).
 */
import type { DctSample, EntrySample } from '../atomo/types';
import { checkFiniteArray, checkLength } from './checks';
import type { ByteReader, ByteWriter } from './cursor';
import { CodecError } from './errors';
import { readFloat32Block, writeFloat32Block } from './floats';
import { shapeText, where, type Header } from './header';
import type { SchemeCodec } from './scheme';
import { readVarint, varintLength, writeVarint } from './varint';

/** Smallest body of one entry: a one-byte varint and a float32. */
const MIN_ENTRY_BYTES = 5;

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
          throw new CodecError('indices-unsorted', `${ctx}: index ${index} at position ${i} does not exceed the previous index ${previous}`);
        }
        if (index >= elements) {
          throw new CodecError('index-out-of-range', `${ctx}: index ${index} out of range for a layer of ${elements} entries`);
        }
        varintBytes += varintLength(index - previous - 1);
        previous = index;
      }
      return 4 + varintBytes + 4 * indices.length;
    },

    encodeBody(sample: S, writer: ByteWriter): void {
      checkFiniteArray(context(sample), 'values', sample.values);
      const { indices } = sample;
      writer.u32(indices.length);
      let previous = -1;
      for (let i = 0; i < indices.length; i++) {
        const index = indices[i]!;
        writeVarint(writer, index - previous - 1);
        previous = index;
      }
      writeFloat32Block(writer, sample.values);
    },

    decodeBody(reader: ByteReader, header: Header): S {
      const ctx = where(header);
      reader.need(4, 'entry count');
      const count = reader.u32();
      if (count > header.elements) {
        throw new CodecError('count-out-of-range', `${ctx}: ${count} entries for a layer of ${header.elements}`);
      }
      // Each entry needs at least 5 bytes; checking that before allocating
      // keeps a short message from reserving a large array.
      reader.need(count * MIN_ENTRY_BYTES, `${count} entries (at least ${MIN_ENTRY_BYTES} bytes each)`);
      const indices = new Uint32Array(count);
      let previous = -1;
      for (let i = 0; i < count; i++) {
        const index = previous + 1 + readVarint(reader, `${scheme} index`);
        if (index >= header.elements) {
          throw new CodecError('index-out-of-range', `${ctx}: index ${index} (entry ${i}) out of range for ${header.elements} entries`);
        }
        indices[i] = index;
        previous = index;
      }
      reader.need(4 * count, `${count} float32 values`);
      const values = readFloat32Block(reader, count);
      checkFiniteArray(ctx, 'values', values);
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
