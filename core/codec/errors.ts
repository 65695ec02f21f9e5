/**
 * The one error type of the codec. Every rejection, on either side, carries a
 * machine-readable code (for the server's error event and for tests) and a
 * human message naming the scheme, the layer and the offending value.
 */

/** Why an encode or decode was refused. See docs/wire-format.md §Errors. */
export type CodecErrorCode =
  // framing
  | 'not-bytes' // decode input is not a Uint8Array
  | 'truncated' // fewer bytes than the header or body needs
  | 'trailing-bytes' // bytes left after a complete body
  | 'unknown-version' // format version byte is not CODEC_VERSION
  | 'unknown-scheme' // scheme id byte is not one of the known schemes (SCHEME_IDS)
  // shape and addressing
  | 'bad-layer' // layer index not an integer in 0..65535 (encode)
  | 'bad-shape' // rows or cols zero, not an integer, or beyond u32
  | 'too-large' // rows·cols above the maxElements limit
  | 'shape-mismatch' // shape differs from limits.expectedShape
  | 'layer-mismatch' // layer differs from limits.expectedLayer
  | 'length-mismatch' // an array's length disagrees with shape or count (encode)
  // scheme bodies
  | 'count-out-of-range' // svd k > min(rows, cols), entry count > rows·cols, qsgd-elias count > bucket
  | 'index-out-of-range' // entry index ≥ rows·cols, a qsgd-elias gap past its bucket's end
  | 'indices-unsorted' // entry indices not strictly increasing (encode)
  | 'bad-varint' // LEB128 overlong (non-canonical) or beyond 32 bits
  | 'bad-elias' // an Elias-γ code with more than 30 leading zeros (a value no field can hold)
  | 'non-finite' // NaN or ±Infinity in any float
  | 'negative-scale' // qsgd norm or terngrad scaler below zero
  | 'bad-levels' // qsgd s = 0 or s not an integer in 1..65535
  | 'bad-bucket' // qsgd bucket size not an integer in 0..2³⁰
  | 'level-out-of-range' // qsgd level above s
  // terngrad code 11, ternary not in {−1,0,1}, sign flag not 0/1; atomo-entry code 11 or a non-canonical τ
  | 'bad-value'
  | 'nonzero-padding' // bits after the last packed entry are not zero
  | 'bad-decomposition'; // atomo-auto atoms of no decomposition (id not 1, 2 or 5)

/** Thrown by encodeLayer, decodeLayer and encodedByteLength; nothing else escapes them. */
export class CodecError extends Error {
  /** Machine-readable reason, stable across versions of the message text. */
  readonly code: CodecErrorCode;

  constructor(code: CodecErrorCode, message: string) {
    super(message);
    this.name = 'CodecError';
    this.code = code;
  }
}
