/**
 * Scheme `atomo-auto` (id 7): ATOMO with the decomposition chosen per layer
 * and round. Body:
 *   u8  decomposition: the scheme id of the atoms carried, 1 (atomo-entry),
 *       2 (atomo-svd) or 5 (atomo-dct); anything else is refused
 *   that scheme's own body (entry.ts, spectral.ts)
 * Body bytes: 1 + the atoms' body. Canonical because each inner body is.
 */
import type { AtomSample, AutoSample } from '../atomo/types';
import type { ByteReader, ByteWriter } from './cursor';
import { dctCodec, entryCodec } from './entry';
import { CodecError } from './errors';
import { SCHEME_IDS, shapeText, where, type Header } from './header';
import type { SchemeCodec } from './scheme';
import { autoBodyBytes } from './sizes';
import { spectralCodec } from './spectral';

const INNER: readonly AtomSample['scheme'][] = ['atomo-entry', 'atomo-svd', 'atomo-dct'];

function innerCodec(scheme: AtomSample['scheme']): SchemeCodec<AtomSample> {
  switch (scheme) {
    case 'atomo-entry':
      return entryCodec as SchemeCodec<AtomSample>;
    case 'atomo-svd':
      return spectralCodec as SchemeCodec<AtomSample>;
    case 'atomo-dct':
      return dctCodec as SchemeCodec<AtomSample>;
  }
}

/** The atoms of a sample, checked to be of a decomposition and of the layer's shape. */
function atomsOf(sample: AutoSample): AtomSample {
  const { atoms, shape } = sample;
  if (typeof atoms !== 'object' || atoms === null || !INNER.includes(atoms.scheme)) {
    const named = typeof atoms === 'object' && atoms !== null ? JSON.stringify(atoms.scheme) : String(atoms);
    throw new CodecError(
      'bad-decomposition',
      `atomo-auto (${shapeText(shape[0], shape[1])}): atoms of ${named}, expected ${INNER.join(', ')}`,
    );
  }
  if (atoms.shape[0] !== shape[0] || atoms.shape[1] !== shape[1]) {
    throw new CodecError(
      'length-mismatch',
      `atomo-auto (${shapeText(shape[0], shape[1])}): ` +
        `atoms of shape ${shapeText(atoms.shape[0], atoms.shape[1])}, expected the layer's`,
    );
  }
  return atoms;
}

/** Encoder and decoder of atomo-auto samples. */
export const autoCodec: SchemeCodec<AutoSample> = {
  bodyByteLength(sample: AutoSample, elements: number): number {
    const atoms = atomsOf(sample);
    return autoBodyBytes(innerCodec(atoms.scheme).bodyByteLength(atoms, elements));
  },

  encodeBody(sample: AutoSample, writer: ByteWriter, elements: number): void {
    const atoms = atomsOf(sample);
    writer.u8(SCHEME_IDS[atoms.scheme]);
    innerCodec(atoms.scheme).encodeBody(atoms, writer, elements);
  },

  decodeBody(reader: ByteReader, header: Header): AutoSample {
    reader.need(1, 'decomposition');
    const id = reader.u8();
    const scheme = INNER.find((s) => SCHEME_IDS[s] === id);
    if (scheme === undefined) {
      throw new CodecError(
        'bad-decomposition',
        `${where(header)}: decomposition id ${id}, expected ${INNER.map((s) => `${SCHEME_IDS[s]} (${s})`).join(', ')}`,
      );
    }
    const atoms = innerCodec(scheme).decodeBody(reader, { ...header, scheme, id });
    return { scheme: 'atomo-auto', shape: atoms.shape, atoms };
  },
};
