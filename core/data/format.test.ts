import { describe, expect, it } from 'vitest';
import { asciiToBytes } from './ascii';
import {
  MNIST_FORMAT_VERSION,
  MnistFormatError,
  parseMnistHeader,
  validateMnistHeader,
  verifyMnistBinary,
} from './format';
import { syntheticMnist } from './testing';

const packed = syntheticMnist(30, 20);

/** A thunk validating a copy of the header with the field at `path` set to `value` (removed if undefined). */
function validateEdited(path: string, value: unknown) {
  const header = structuredClone(packed.header) as unknown as Record<string, unknown>;
  const keys = path.split('.');
  const last = keys.pop()!;
  let object = header;
  for (const key of keys) object = object[key] as Record<string, unknown>;
  if (value === undefined) delete object[last];
  else object[last] = value;
  return () => validateMnistHeader(header);
}

describe('MNIST header', () => {
  it('round-trips through its bytes', () => {
    expect(parseMnistHeader(packed.headerBytes)).toEqual(packed.header);
    expect(packed.header.splits).toEqual({ train: { start: 0, count: 20 }, test: { start: 20, count: 10 } });
    expect(packed.header.binary.byteLength).toBe(30 * 785);
  });

  it('rejects a truncated header as invalid JSON', () => {
    const truncated = packed.headerBytes.subarray(0, packed.headerBytes.length / 2);
    expect(() => parseMnistHeader(truncated)).toThrow(MnistFormatError);
    expect(() => parseMnistHeader(truncated)).toThrow(/mnist\.json is not valid JSON/);
  });

  it('rejects binary garbage as not ASCII', () => {
    expect(() => parseMnistHeader(Uint8Array.of(0x7b, 0xff, 0x00))).toThrow(/not ASCII/);
  });

  it('rejects an empty file', () => {
    expect(() => parseMnistHeader(new Uint8Array(0))).toThrow(/not valid JSON/);
  });

  it('rejects JSON that is not a header', () => {
    expect(() => parseMnistHeader(asciiToBytes('[1,2,3]'))).toThrow(/header must be an object/);
    expect(() => parseMnistHeader(asciiToBytes('{"format":"something else"}'))).toThrow(
      /format must be "atomo-swarm\/mnist"/,
    );
  });

  it('rejects another format version', () => {
    expect(validateEdited('version', MNIST_FORMAT_VERSION + 1)).toThrow(
      /unsupported format version 2 \(this build reads 1\)/,
    );
  });

  it('names the missing or mistyped field', () => {
    expect(validateEdited('splits.test', undefined)).toThrow(/splits\.test must be an object, got nothing/);
    expect(validateEdited('binary.byteLength', -1)).toThrow(/binary\.byteLength must be a non-negative integer/);
    expect(validateEdited('layout.labels.offset', 1.5)).toThrow(/layout\.labels\.offset/);
    expect(validateEdited('rows', 32)).toThrow(/rows must be 28, got 32/);
    expect(validateEdited('binary.crc32', 'XYZ')).toThrow(/binary\.crc32 must be 8 lower-case hex digits/);
  });

  it('rejects inconsistent layouts', () => {
    expect(validateEdited('splits.test.start', 21)).toThrow(/back to back/);
    expect(validateEdited('layout.labels.offset', 10)).toThrow(/overlap/);
    expect(validateEdited('layout.labels.offset', 30 * 784 + 1)).toThrow(/runs past the 23550-byte binary/);
    expect(validateEdited('layout.images.byteLength', 784)).toThrow(/30 images need 23520/);
    expect(validateEdited('binary.file', '../etc/passwd')).toThrow(/plain file name/);
  });
});

describe('MNIST binary verification', () => {
  it('accepts the packed binary', () => {
    expect(() => verifyMnistBinary(packed.header, packed.binary)).not.toThrow();
  });

  it('rejects a truncated binary with both lengths', () => {
    expect(() => verifyMnistBinary(packed.header, packed.binary.subarray(0, 1000))).toThrow(
      /mnist\.bin is truncated: 1000 bytes, header says 23550/,
    );
  });

  it('rejects a longer binary', () => {
    const longer = new Uint8Array(packed.binary.length + 1);
    longer.set(packed.binary);
    expect(() => verifyMnistBinary(packed.header, longer)).toThrow(/header says 23550 \(stale header\?\)/);
  });

  it('rejects a flipped byte by checksum', () => {
    const corrupt = packed.binary.slice();
    corrupt[12345] = corrupt[12345]! ^ 0x01;
    expect(() => verifyMnistBinary(packed.header, corrupt)).toThrow(/checksum mismatch/);
  });
});
