import { describe, expect, it } from 'vitest';
import { crc32Hex } from './crc32';
import { PIXELS_PER_IMAGE } from './dataset';
import { MNIST_HEADER_FILE, MnistFormatError } from './format';
import { decodeMnist, loadMnist, type DataFileReader } from './load';
import { syntheticMnist } from './testing';

const packed = syntheticMnist(30, 20);

/** An in-memory directory, with each file optionally replaced. */
function memoryReader(files: Record<string, Uint8Array>): DataFileReader {
  return async (name) => {
    const bytes = files[name];
    if (!bytes) throw new Error(`no such file ${name}`);
    return bytes;
  };
}

describe('loadMnist', () => {
  it('slices train and test in split order', async () => {
    const data = await loadMnist(memoryReader({ [MNIST_HEADER_FILE]: packed.headerBytes, 'mnist.bin': packed.binary }));
    expect(data.train.count).toBe(20);
    expect(data.test.count).toBe(10);
    expect(data.train.images.length).toBe(20 * PIXELS_PER_IMAGE);
    expect(Array.from(data.train.labels.subarray(0, 12))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1]);
    // Test example 0 is overall example 20: label 0, first pixel 20.
    expect(data.test.labels[0]).toBe(0);
    expect(data.test.image(0)[0]).toBe(20);
    expect(data.test.image(9)[5]).toBe(34);
  });

  it('reads the binary named in the header', async () => {
    const names: string[] = [];
    const reader: DataFileReader = async (name) => {
      names.push(name);
      return name === MNIST_HEADER_FILE ? packed.headerBytes : packed.binary;
    };
    await loadMnist(reader);
    expect(names).toEqual(['mnist.json', 'mnist.bin']);
  });

  it('rejects a truncated binary', async () => {
    const reader = memoryReader({
      [MNIST_HEADER_FILE]: packed.headerBytes,
      'mnist.bin': packed.binary.subarray(0, 777),
    });
    await expect(loadMnist(reader)).rejects.toThrow(MnistFormatError);
    await expect(loadMnist(reader)).rejects.toThrow(/truncated: 777 bytes/);
  });

  it('rejects a corrupt label even if the checksum were recomputed', () => {
    const corrupt = syntheticMnist(30, 20);
    // packMnist refuses bad labels, so forge one byte and fix the CRC by hand.
    const binary = corrupt.binary.slice();
    binary[30 * PIXELS_PER_IMAGE + 3] = 12;
    const header = { ...corrupt.header, binary: { ...corrupt.header.binary, crc32: crc32Hex(binary) } };
    expect(() => decodeMnist(header, binary)).toThrow(/label 12 at example 3 is not a digit/);
  });

  it('reads a named dataset from its own header file', async () => {
    const names: string[] = [];
    const reader: DataFileReader = async (name) => {
      names.push(name);
      return name === 'fashion.json' ? packed.headerBytes : packed.binary;
    };
    expect((await loadMnist(reader, 'fashion')).train.count).toBe(20);
    expect(names).toEqual(['fashion.json', 'mnist.bin']);
  });

  it('passes on reader errors', async () => {
    await expect(loadMnist(memoryReader({}))).rejects.toThrow(/no such file mnist\.json/);
  });
});
