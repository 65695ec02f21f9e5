import { describe, expect, it } from 'vitest';
import { DIGIT_BOX, softmax, toMnistImage, topK } from './drawn';

/** A canvas-sized ink field with a filled rectangle. */
function rectangle(width: number, height: number, x0: number, y0: number, w: number, h: number): Float32Array {
  const ink = new Float32Array(width * height);
  for (let y = y0; y < y0 + h; y++) for (let x = x0; x < x0 + w; x++) ink[y * width + x] = 1;
  return ink;
}

function bounds(image: Float32Array) {
  let top = 28,
    bottom = -1,
    left = 28,
    right = -1,
    mass = 0,
    cx = 0,
    cy = 0;
  for (let y = 0; y < 28; y++) {
    for (let x = 0; x < 28; x++) {
      const v = image[y * 28 + x]!;
      if (v <= 0) continue;
      top = Math.min(top, y);
      bottom = Math.max(bottom, y);
      left = Math.min(left, x);
      right = Math.max(right, x);
      mass += v;
      cx += v * (x + 0.5);
      cy += v * (y + 0.5);
    }
  }
  return { width: right - left + 1, height: bottom - top + 1, cx: cx / mass, cy: cy / mass };
}

describe('toMnistImage', () => {
  it('scales the longer side to 20 pixels, keeps the aspect ratio and centres the mass', () => {
    // A tall stroke in the top-left corner of a 280×280 canvas: 40 wide, 200 high.
    const image = toMnistImage(rectangle(280, 280, 10, 5, 40, 200), 280, 280)!;
    const b = bounds(image);
    expect(b.height).toBe(DIGIT_BOX);
    expect(b.width).toBe(4);
    // Rounding the shift to whole pixels leaves the centre within half a pixel of (14, 14).
    expect(Math.abs(b.cx - 14)).toBeLessThanOrEqual(0.5);
    expect(Math.abs(b.cy - 14)).toBeLessThanOrEqual(0.5);
  });

  it('anti-aliases: strokes off the pixel grid give grey edges, and the ink is conserved by area', () => {
    // Two 30-wide bars 20 apart over 300 rows: the 80×300 box becomes 5×20 (scale 1/16 across, 1/15 down), so the
    // bars' edges fall mid-pixel.
    const ink = rectangle(300, 300, 0, 0, 30, 300);
    rectangle(300, 300, 50, 0, 30, 300).forEach((v, i) => (ink[i] = Math.max(ink[i]!, v)));
    const image = toMnistImage(ink, 300, 300)!;
    expect(bounds(image)).toMatchObject({ width: 5, height: 20 });
    const values = [...image].filter((v) => v > 0);
    expect(values.some((v) => v > 0.05 && v < 0.95)).toBe(true);
    // Ink area × (5/80) × (20/300) = 18000 / 240 = 75; no target pixel exceeds 1, so nothing is clipped.
    expect(values.reduce((a, b) => a + b, 0)).toBeCloseTo(75, 3);
  });

  it('is the same digit wherever and however large it is drawn', () => {
    const a = toMnistImage(rectangle(280, 280, 20, 20, 60, 150), 280, 280)!;
    const b = toMnistImage(rectangle(280, 280, 150, 100, 60, 150), 280, 280)!;
    expect([...b]).toEqual([...a]);
  });

  it('returns null for an empty canvas and refuses a size that does not match', () => {
    expect(toMnistImage(new Float32Array(100), 10, 10)).toBeNull();
    expect(() => toMnistImage(new Float32Array(99), 10, 10)).toThrow(RangeError);
  });
});

describe('softmax and topK', () => {
  it('give probabilities that sum to 1, largest first', () => {
    const p = softmax([1, 3, 2, 1000, -5]);
    expect(p.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    expect(topK(softmax([0, 2, 1]), 2).map((t) => t.digit)).toEqual([1, 2]);
    expect(topK(p, 1)[0]).toEqual({ digit: 3, probability: p[3] });
  });
});
