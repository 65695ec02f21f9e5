/**
 * CRC-32 (IEEE 802.3; the polynomial of zip, PNG and gzip), bit-reflected,
 * initial value and final xor 0xFFFFFFFF. Checks that the MNIST binary that
 * reached a tab or the server is the one make-data wrote.
 */

const REFLECTED_POLYNOMIAL = 0xedb88320;

/** Remainder of every byte value: one table lookup per byte instead of eight shifts. */
const TABLE: Uint32Array = (() => {
  const table = new Uint32Array(256);
  for (let byte = 0; byte < 256; byte++) {
    let remainder = byte;
    for (let bit = 0; bit < 8; bit++) {
      remainder = remainder & 1 ? (remainder >>> 1) ^ REFLECTED_POLYNOMIAL : remainder >>> 1;
    }
    table[byte] = remainder >>> 0;
  }
  return table;
})();

/**
 * Continues a CRC-32 over more bytes: crc32(a ++ b) = crc32Update(crc32(a), b).
 * Start from 0 for a fresh checksum.
 */
export function crc32Update(previous: number, bytes: Uint8Array): number {
  let crc = ~previous >>> 0;
  for (let i = 0; i < bytes.length; i++) {
    crc = TABLE[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  }
  return ~crc >>> 0;
}

/** CRC-32 of the bytes, as an unsigned 32-bit integer. */
export function crc32(bytes: Uint8Array): number {
  return crc32Update(0, bytes);
}

/** The checksum as 8 lower-case hex digits, the way the header stores it. */
export function crc32Hex(bytes: Uint8Array): string {
  return crc32(bytes).toString(16).padStart(8, '0');
}
