/**
 * Scheme `none` (id 0), the uncompressed baseline. Body: rows·cols float32,
 * row-major. Body bytes: 4·m·n.
 */
import type { DenseSample } from '../atomo/types';
import { checkFiniteArray, checkLength } from './checks';
import type { ByteReader, ByteWriter } from './cursor';
import { readFloat32Block, writeFloat32Block } from './floats';
import { shapeText, where, type Header } from './header';
import type { SchemeCodec } from './scheme';
import { denseBodyBytes } from './sizes';

/** Encoder and decoder of dense float32 layers. */
export const denseCodec: SchemeCodec<DenseSample> = {
  bodyByteLength(sample: DenseSample, elements: number): number {
    checkLength(context(sample), 'values', sample.values.length, elements, 'rows·cols');
    return denseBodyBytes(elements);
  },

  encodeBody(sample: DenseSample, writer: ByteWriter): void {
    checkFiniteArray(context(sample), 'values', sample.values);
    writeFloat32Block(writer, sample.values);
  },

  decodeBody(reader: ByteReader, header: Header): DenseSample {
    reader.need(4 * header.elements, `${header.elements} float32 values`);
    const values = readFloat32Block(reader, header.elements);
    checkFiniteArray(where(header), 'values', values);
    return { scheme: 'none', shape: [header.rows, header.cols], values };
  },
};

function context(sample: DenseSample): string {
  return `none (${shapeText(sample.shape[0], sample.shape[1])})`;
}
