/**
 * The 12-byte header in front of every encoded layer:
 *   offset 0  u8   format version (CODEC_VERSION)
 *   offset 1  u8   scheme id (SCHEME_IDS; QSGD_ELIAS_ID for Elias-coded QSGD)
 *   offset 2  u16  layer index
 *   offset 4  u32  rows
 *   offset 8  u32  cols
 * All little-endian. The version comes first so that a future format can
 * change everything after it and still be told apart.
 */
import type { LayerSample, SchemeName, Shape } from '../atomo/types';
import type { ByteReader, ByteWriter } from './cursor';
import { CodecError } from './errors';

/** Format version written into byte 0 and the only one decodeLayer accepts. */
export const CODEC_VERSION = 2;

/** Bytes taken by the header. */
export const HEADER_BYTES = 12;

/** Wire id of each scheme (byte 1 of the header). Never renumber: ids are on the wire. */
export const SCHEME_IDS: Readonly<Record<SchemeName, number>> = {
  none: 0,
  'atomo-entry': 1,
  'atomo-svd': 2,
  qsgd: 3,
  terngrad: 4,
  'atomo-dct': 5,
  powersgd: 6,
  'atomo-auto': 7,
};

/**
 * Wire id of QSGD in the QSGD paper's Elias coding (QsgdSample.coding 'elias'); id 3 is its fixed-width coding. Both
 * decode to a qsgd sample, so the id is a variant of the scheme, not a scheme of its own.
 */
export const QSGD_ELIAS_ID = 8;

/** Scheme of each wire id: the inverse of SCHEME_IDS, and qsgd for QSGD_ELIAS_ID. */
export const SCHEME_BY_ID: readonly SchemeName[] = (() => {
  const byId: SchemeName[] = [];
  for (const [name, id] of Object.entries(SCHEME_IDS) as [SchemeName, number][]) byId[id] = name;
  byId[QSGD_ELIAS_ID] = 'qsgd';
  return byId;
})();

/** Name of each wire id in messages: the scheme's, and qsgd-elias for QSGD_ELIAS_ID. */
const WIRE_NAMES: readonly string[] = [...SCHEME_BY_ID.slice(0, QSGD_ELIAS_ID), 'qsgd-elias'];

/** The wire id a sample travels under: its scheme's, or QSGD_ELIAS_ID for an Elias-coded QSGD sample. */
export function wireId(sample: LayerSample): number {
  return sample.scheme === 'qsgd' && sample.coding === 'elias' ? QSGD_ELIAS_ID : SCHEME_IDS[sample.scheme];
}

/** Default cap on rows·cols for decodeLayer: 16M entries (64 MiB as float32). */
export const DEFAULT_MAX_ELEMENTS = 16 * 1024 * 1024;

/**
 * Hard cap on rows·cols, for both sides, whatever limit a caller passes: it
 * keeps every flat index exact in a u32 and every typed array allocatable.
 */
export const MAX_ELEMENTS_CEILING = 2 ** 30;

const MAX_LAYER = 0xffff;
const MAX_DIM = 0xffffffff;

/** What the header says, after validation. */
export interface Header {
  readonly scheme: SchemeName;
  /** The wire id byte (SCHEME_IDS[scheme], or QSGD_ELIAS_ID). */
  readonly id: number;
  readonly layer: number;
  readonly rows: number;
  readonly cols: number;
  /** rows·cols, known to be ≤ the element limit. */
  readonly elements: number;
}

/** Options of decodeLayer: the receiver's policy on what it will accept. */
export interface DecodeLimits {
  /** Largest rows·cols accepted (default DEFAULT_MAX_ELEMENTS, never above MAX_ELEMENTS_CEILING). */
  readonly maxElements?: number | undefined;
  /** Reject any other shape. */
  readonly expectedShape?: Shape | undefined;
  /** Reject any other layer index. */
  readonly expectedLayer?: number | undefined;
}

/** "784×128" */
export function shapeText(rows: number, cols: number): string {
  return `${rows}×${cols}`;
}

/** "atomo-entry layer 3 (784×128)", the prefix of every body error message. */
export function where(header: Header): string {
  return `${WIRE_NAMES[header.id]!} layer ${header.layer} (${shapeText(header.rows, header.cols)})`;
}

/** Validates a sample's scheme, shape and layer for encoding; returns rows·cols. */
export function checkEncodeHeader(scheme: SchemeName, shape: Shape, layer: number): number {
  // The type system rules this out, but samples can come from untyped code.
  if (!Object.hasOwn(SCHEME_IDS, scheme)) {
    throw new CodecError(
      'unknown-scheme',
      `unknown scheme ${JSON.stringify(scheme)} (known: ${SCHEME_BY_ID.join(', ')})`,
    );
  }
  if (!Number.isInteger(layer) || layer < 0 || layer > MAX_LAYER) {
    throw new CodecError('bad-layer', `${scheme}: layer index ${layer} is not an integer in 0..${MAX_LAYER}`);
  }
  const [rows, cols] = shape;
  if (!isDim(rows) || !isDim(cols)) {
    throw new CodecError(
      'bad-shape',
      `${scheme}: shape ${shapeText(rows, cols)} needs integer rows and cols in 1..${MAX_DIM}`,
    );
  }
  const elements = rows * cols;
  if (elements > MAX_ELEMENTS_CEILING) {
    throw new CodecError(
      'too-large',
      `${scheme}: shape ${shapeText(rows, cols)} has ${elements} entries, ` +
        `above the codec ceiling of ${MAX_ELEMENTS_CEILING}`,
    );
  }
  return elements;
}

function isDim(n: number): boolean {
  return Number.isInteger(n) && n >= 1 && n <= MAX_DIM;
}

/** Writes the header of a sample whose shape checkEncodeShape accepted, under wire id `id` (wireId). */
export function writeHeader(writer: ByteWriter, id: number, layer: number, shape: Shape): void {
  writer.u8(CODEC_VERSION);
  writer.u8(id);
  writer.u16(layer);
  writer.u32(shape[0]);
  writer.u32(shape[1]);
}

/** Reads and validates the header against the receiver's limits. */
export function readHeader(reader: ByteReader, limits: DecodeLimits): Header {
  // The version is checked before the length: a later version may have a
  // different header size, and "unknown version" is the more useful message.
  if (reader.remaining >= 1) {
    const version = reader.peekU8();
    if (version !== CODEC_VERSION) {
      throw new CodecError(
        'unknown-version',
        `unknown format version ${version} (this codec reads version ${CODEC_VERSION})`,
      );
    }
  }
  reader.need(HEADER_BYTES, 'header');
  reader.u8();
  const schemeId = reader.u8();
  const layer = reader.u16();
  const rows = reader.u32();
  const cols = reader.u32();

  const scheme = SCHEME_BY_ID[schemeId];
  if (scheme === undefined) {
    throw new CodecError(
      'unknown-scheme',
      `unknown scheme id ${schemeId} in layer ${layer} (known: 0..${SCHEME_BY_ID.length - 1})`,
    );
  }
  if (rows === 0 || cols === 0) {
    throw new CodecError('bad-shape', `${scheme} layer ${layer}: empty shape ${shapeText(rows, cols)}`);
  }
  const maxElements = Math.min(limits.maxElements ?? DEFAULT_MAX_ELEMENTS, MAX_ELEMENTS_CEILING);
  const elements = rows * cols;
  // Written as !(≤) so that a NaN limit refuses everything rather than nothing.
  if (!(elements <= maxElements)) {
    throw new CodecError(
      'too-large',
      `${scheme} layer ${layer}: shape ${shapeText(rows, cols)} has ${elements} entries, ` +
        `above the limit of ${maxElements}`,
    );
  }
  if (limits.expectedLayer !== undefined && layer !== limits.expectedLayer) {
    throw new CodecError('layer-mismatch', `${scheme}: got layer ${layer}, expected layer ${limits.expectedLayer}`);
  }
  const expected = limits.expectedShape;
  if (expected !== undefined && (rows !== expected[0] || cols !== expected[1])) {
    throw new CodecError(
      'shape-mismatch',
      `${scheme} layer ${layer}: got shape ${shapeText(rows, cols)}, expected ${shapeText(expected[0], expected[1])}`,
    );
  }
  return { scheme, id: schemeId, layer, rows, cols, elements };
}
