/**
 * What each scheme's module provides. index.ts dispatches on the sample's
 * scheme (encode) or the header's scheme id (decode) to one of these.
 */
import type { LayerSample } from '../atomo/types';
import type { ByteReader, ByteWriter } from './cursor';
import type { Header } from './header';

/** Encoder, decoder and byte count of one scheme's body (everything after the header). */
export interface SchemeCodec<S extends LayerSample> {
  /**
   * Bytes of the body. Validates the sample's structure (shape, array
   * lengths, counts, levels, index order) but does not scan values.
   */
  bodyByteLength(sample: S, elements: number): number;
  /** Writes the body, validating every value; bodyByteLength has already accepted the sample. */
  encodeBody(sample: S, writer: ByteWriter, elements: number): void;
  /** Reads and validates the body; never allocates before checking the bytes exist. */
  decodeBody(reader: ByteReader, header: Header): S;
}
