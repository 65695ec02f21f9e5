/**
 * The wire format of one layer's sample: a 12-byte header and a scheme
 * body, little-endian. Layouts and byte formulas: docs/wire-format.md.
 */
import { reconstruct } from '../atomo/reconstruct';
import { schemeDecomposition, type Decomposition, type LayerSample } from '../atomo/types';
import { autoCodec } from './auto';
import { ByteReader, ByteWriter } from './cursor';
import { denseCodec } from './dense';
import { dctCodec, entryCodec } from './entry';
import { CodecError } from './errors';
import {
  checkEncodeHeader,
  HEADER_BYTES,
  readHeader,
  SCHEME_BY_ID,
  wireId,
  writeHeader,
  type DecodeLimits,
} from './header';
import { powerSgdCodec } from './powersgd';
import type { SchemeCodec } from './scheme';
import { qsgdCodec } from './qsgd';
import { denseLayerBytes } from './sizes';
import { spectralCodec } from './spectral';
import { terngradCodec } from './terngrad';

export { CodecError, type CodecErrorCode } from './errors';
export {
  CODEC_VERSION,
  DEFAULT_MAX_ELEMENTS,
  HEADER_BYTES,
  MAX_ELEMENTS_CEILING,
  QSGD_ELIAS_ID,
  SCHEME_IDS,
  type DecodeLimits,
} from './header';
export { denseBytes, expectedBytes, maxLayerBytes, MIN_LAYER_BYTE_BUDGET } from './sizes';

/** A decoded layer: which layer it is and its sample. */
export interface DecodedLayer {
  readonly layer: number;
  readonly sample: LayerSample;
}

/**
 * Exact bytes encodeLayer will produce for `sample` (header included), by
 * the formulas of docs/wire-format.md, without encoding. Throws CodecError
 * if the sample's structure is inconsistent; values are not scanned.
 */
export function encodedByteLength(sample: LayerSample): number {
  const elements = checkEncodeHeader(sample.scheme, sample.shape, 0);
  return HEADER_BYTES + bodyByteLength(sample, elements);
}

/** Encodes one layer's sample; throws CodecError on an inconsistent sample or a non-finite value. */
export function encodeLayer(sample: LayerSample, layer: number): Uint8Array {
  const elements = checkEncodeHeader(sample.scheme, sample.shape, layer);
  const length = HEADER_BYTES + bodyByteLength(sample, elements);
  const writer = new ByteWriter(length);
  writeHeader(writer, wireId(sample), layer, sample.shape);
  codecOf(sample.scheme).encodeBody(sample, writer, elements);
  if (writer.pos !== length) {
    // A broken byte formula would silently desynchronise sender and receiver.
    throw new Error(`codec bug: ${sample.scheme} wrote ${writer.pos} bytes, its formula says ${length}`);
  }
  return writer.bytes;
}

/**
 * What a worker sends for one layer: the scheme's encoding, or, when that
 * would be larger than the layer as dense float32, the dense encoding of the
 * same estimate, reconstruct(sample): the receiver computes the identical ĝ
 * from either, so no layer of any scheme ever costs more than float32
 * (a 1×n bias with one spectral atom, say: 4·(n + 2) body bytes against 4·n).
 * Throws CodecError as encodeLayer does.
 */
export function encodeForWire(sample: LayerSample, layer: number): Uint8Array {
  if (sample.scheme !== 'none' && encodedByteLength(sample) > denseLayerBytes(sample.shape)) {
    const values = reconstruct(sample);
    // An estimate that overflows float32 cannot go dense; its own encoding goes, and the receiver refuses it.
    if (values.every(Number.isFinite)) return encodeLayer({ scheme: 'none', shape: sample.shape, values }, layer);
  }
  return encodeLayer(sample, layer);
}

/**
 * Decodes and validates one layer. Returns fresh arrays (never views of
 * `bytes`); throws only CodecError, naming what is wrong.
 */
export function decodeLayer(bytes: Uint8Array, limits: DecodeLimits = {}): DecodedLayer {
  if (!(bytes instanceof Uint8Array)) {
    throw new CodecError('not-bytes', `expected a Uint8Array, got ${describe(bytes)}`);
  }
  const reader = new ByteReader(bytes);
  const header = readHeader(reader, limits);
  const sample = codecOf(header.scheme).decodeBody(reader, header);
  if (reader.remaining !== 0) {
    throw new CodecError(
      'trailing-bytes',
      `trailing bytes: ${header.scheme} layer ${header.layer} ends at byte ${reader.pos}, input has ${bytes.length}`,
    );
  }
  return { layer: header.layer, sample };
}

function bodyByteLength(sample: LayerSample, elements: number): number {
  return codecOf(sample.scheme).bodyByteLength(sample, elements);
}

/** Each scheme's codec, by the scheme its samples and headers name. */
const CODECS: { readonly [K in LayerSample['scheme']]: SchemeCodec<Extract<LayerSample, { readonly scheme: K }>> } = {
  none: denseCodec,
  'atomo-entry': entryCodec,
  'atomo-svd': spectralCodec,
  qsgd: qsgdCodec,
  terngrad: terngradCodec,
  'atomo-dct': dctCodec,
  powersgd: powerSgdCodec,
  'atomo-auto': autoCodec,
};

/**
 * The codec of `scheme`, typed for any sample: the table above pairs each
 * scheme with its own codec, and a sample's scheme field names its type, so
 * the one cast here stands for the type checker's per-case narrowing.
 */
function codecOf(scheme: LayerSample['scheme']): SchemeCodec<LayerSample> {
  return CODECS[scheme] as SchemeCodec<LayerSample>;
}

/**
 * How an encoded layer travelled, from its header alone (and atomo-auto's
 * decomposition byte): sampleDecomposition of what it decodes to, without
 * decoding. Null for a message too short to say, or of a scheme that is not ATOMO.
 */
export function messageDecomposition(bytes: Uint8Array): Decomposition | 'dense' | null {
  const scheme = SCHEME_BY_ID[bytes[1] ?? -1];
  if (scheme === undefined || bytes.length < HEADER_BYTES) return null;
  if (scheme !== 'atomo-auto') return schemeDecomposition(scheme);
  const inner = SCHEME_BY_ID[bytes[HEADER_BYTES] ?? -1];
  return inner === undefined ? null : schemeDecomposition(inner);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'object') return value.constructor?.name ?? 'object';
  return typeof value;
}
