import { describe, expect, it } from 'vitest';
import { Dataset, PIXELS_PER_IMAGE, createBatch } from './dataset';

function tinyDataset(): Dataset {
  const images = new Uint8Array(3 * PIXELS_PER_IMAGE);
  images.fill(0, 0, PIXELS_PER_IMAGE);
  images.fill(255, PIXELS_PER_IMAGE, 2 * PIXELS_PER_IMAGE);
  images.fill(51, 2 * PIXELS_PER_IMAGE);
  return new Dataset(images, Uint8Array.of(7, 3, 9));
}

describe('Dataset', () => {
  it('rejects images and labels of different counts', () => {
    expect(() => new Dataset(new Uint8Array(PIXELS_PER_IMAGE * 2), new Uint8Array(3))).toThrow(/do not hold 3 images/);
  });

  it('makes a batch of pixel / 255 and labels in index order', () => {
    const batch = tinyDataset().batch([2, 1, 2]);
    expect(batch.pixels.length).toBe(3 * PIXELS_PER_IMAGE);
    expect(batch.pixels[0]).toBe(Math.fround(51 / 255));
    expect(batch.pixels[PIXELS_PER_IMAGE + 100]).toBe(1);
    expect(batch.pixels[3 * PIXELS_PER_IMAGE - 1]).toBe(Math.fround(0.2));
    expect(Array.from(batch.labels)).toEqual([9, 3, 9]);
  });

  it('refills a reused batch without allocating a new one', () => {
    const dataset = tinyDataset();
    const out = createBatch(2);
    const first = dataset.batch([0, 1], out);
    expect(first).toBe(out);
    expect(out.pixels[0]).toBe(0);
    dataset.batch(Uint32Array.of(1, 0), out);
    expect(out.pixels[0]).toBe(1);
    expect(Array.from(out.labels)).toEqual([3, 7]);
  });

  it('rejects out-of-range indices and too small outputs', () => {
    const dataset = tinyDataset();
    expect(() => dataset.batch([3])).toThrow(/index 3 outside 0\.\.2/);
    expect(() => dataset.batch([0, 1, 2], createBatch(2))).toThrow(/holds 2 examples, 3 requested/);
    expect(() => dataset.image(-1)).toThrow(RangeError);
  });

  it('returns images as views', () => {
    const dataset = tinyDataset();
    expect(dataset.image(1).buffer).toBe(dataset.images.buffer);
    expect(dataset.image(1)[0]).toBe(255);
  });
});
