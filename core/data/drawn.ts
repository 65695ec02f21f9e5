/**
 * A digit drawn by hand, made to look like an MNIST digit before the model
 * sees it, as the MNIST authors prepared theirs: the ink's bounding box is
 * scaled, keeping its aspect ratio, to fit a 20×20 box with area averaging
 * (which anti-aliases the strokes into grey levels), and placed in the 28×28
 * field so that its centre of mass sits at the centre.
 */
import { IMAGE_COLS, IMAGE_ROWS } from './dataset';

/** The side of the box the digit's longer side is scaled to. */
export const DIGIT_BOX = 20;

/** Ink below this (of 1) counts as paper when finding the bounding box. */
const INK_THRESHOLD = 0.05;

/**
 * The 28×28 image (784 floats in [0, 1], row-major, 1 = ink) of the ink in
 * `ink` (width·height values in [0, 1]); null when nothing is drawn.
 */
export function toMnistImage(ink: Float32Array, width: number, height: number): Float32Array | null {
  if (ink.length !== width * height) throw new RangeError(`toMnistImage: ${ink.length} values for ${width}×${height}`);
  let top = height;
  let bottom = -1;
  let left = width;
  let right = -1;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (ink[y * width + x]! <= INK_THRESHOLD) continue;
      top = Math.min(top, y);
      bottom = Math.max(bottom, y);
      left = Math.min(left, x);
      right = Math.max(right, x);
    }
  }
  if (bottom < 0) return null;
  const boxW = right - left + 1;
  const boxH = bottom - top + 1;
  const scale = DIGIT_BOX / Math.max(boxW, boxH);
  const outW = Math.max(1, Math.round(boxW * scale));
  const outH = Math.max(1, Math.round(boxH * scale));

  // Area averaging: every source pixel adds its ink, weighted by how much of it falls in each target pixel.
  const small = new Float64Array(outW * outH);
  const sx = outW / boxW;
  const sy = outH / boxH;
  for (let y = top; y <= bottom; y++) {
    const y0 = (y - top) * sy;
    const y1 = y0 + sy;
    for (let x = left; x <= right; x++) {
      const value = ink[y * width + x]!;
      if (value === 0) continue;
      const x0 = (x - left) * sx;
      const x1 = x0 + sx;
      for (let ty = Math.floor(y0); ty < Math.min(outH, Math.ceil(y1)); ty++) {
        const wy = Math.min(y1, ty + 1) - Math.max(y0, ty);
        if (wy <= 0) continue;
        for (let tx = Math.floor(x0); tx < Math.min(outW, Math.ceil(x1)); tx++) {
          const wx = Math.min(x1, tx + 1) - Math.max(x0, tx);
          if (wx > 0) small[ty * outW + tx]! += value * wx * wy;
        }
      }
    }
  }

  // Centre of mass of the scaled digit, then the shift that puts it at the field's centre.
  let mass = 0;
  let cx = 0;
  let cy = 0;
  for (let y = 0; y < outH; y++) {
    for (let x = 0; x < outW; x++) {
      const v = Math.min(1, small[y * outW + x]!);
      mass += v;
      cx += v * (x + 0.5);
      cy += v * (y + 0.5);
    }
  }
  const offsetX = Math.round(IMAGE_COLS / 2 - cx / mass);
  const offsetY = Math.round(IMAGE_ROWS / 2 - cy / mass);
  const image = new Float32Array(IMAGE_COLS * IMAGE_ROWS);
  for (let y = 0; y < outH; y++) {
    const ty = y + offsetY;
    if (ty < 0 || ty >= IMAGE_ROWS) continue;
    for (let x = 0; x < outW; x++) {
      const tx = x + offsetX;
      if (tx >= 0 && tx < IMAGE_COLS) image[ty * IMAGE_COLS + tx] = Math.min(1, small[y * outW + x]!);
    }
  }
  return image;
}

/** Softmax of one row of logits: probabilities that sum to 1. */
export function softmax(logits: ArrayLike<number>): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i]!);
  const out = new Float64Array(logits.length);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += out[i] = Math.exp(logits[i]! - max);
  for (let i = 0; i < out.length; i++) out[i]! /= sum;
  return out;
}

/** The `k` most probable classes, most probable first. */
export function topK(probabilities: ArrayLike<number>, k: number): { digit: number; probability: number }[] {
  return Array.from(probabilities, (probability, digit) => ({ digit, probability }))
    .sort((a, b) => b.probability - a.probability)
    .slice(0, k);
}
