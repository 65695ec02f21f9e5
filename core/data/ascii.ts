/**
 * ASCII text ↔ bytes for the MNIST header. core/ has no TextEncoder (it is a
 * DOM/Node API, not ECMAScript), and the header is plain JSON we write
 * ourselves, so 7-bit ASCII is enough and anything else means corruption.
 */

/** Bytes of an ASCII string; throws on a character outside 0..127. */
export function asciiToBytes(text: string): Uint8Array {
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code > 0x7f) throw new RangeError(`non-ASCII character U+${code.toString(16).padStart(4, '0')} at ${i}`);
    bytes[i] = code;
  }
  return bytes;
}

/** The string of ASCII bytes, or null if any byte is outside 0..127. */
export function bytesToAscii(bytes: Uint8Array): string | null {
  let text = '';
  // Chunks keep String.fromCharCode's argument list well under engine limits.
  const CHUNK = 8192;
  for (let start = 0; start < bytes.length; start += CHUNK) {
    const chunk = bytes.subarray(start, Math.min(start + CHUNK, bytes.length));
    for (let i = 0; i < chunk.length; i++) {
      if (chunk[i]! > 0x7f) return null;
    }
    text += String.fromCharCode(...chunk);
  }
  return text;
}
