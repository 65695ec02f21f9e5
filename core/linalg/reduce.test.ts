import { describe, expect, test } from 'vitest';
import { REDUCE_OPS, checkSegmentOffsets, reduceSegments, uniformSegments } from './reduce';

describe('reduceSegments (CPU reference)', () => {
  const x = new Float32Array([3, -4, 0, 1, -2]);
  const offsets = [0, 2, 2, 5]; // [3, -4], [], [0, 1, -2]

  test('each op per segment, 0 for an empty segment', () => {
    const want = { sum: [-1, 0, -1], sumOfSquares: [25, 0, 5], sumOfAbs: [7, 0, 3], maxAbs: [4, 0, 2] };
    for (const op of REDUCE_OPS) expect(Array.from(reduceSegments(op, x, offsets))).toEqual(want[op]);
  });

  test('uniform segments are the rows of a matrix', () => {
    expect(Array.from(uniformSegments(3, 4))).toEqual([0, 4, 8, 12]);
    expect(Array.from(reduceSegments('sum', new Float32Array([1, 2, 3, 4, 5, 6]), uniformSegments(2, 3)))).toEqual([
      6, 15,
    ]);
  });

  test('rejects offsets that decrease or leave the array', () => {
    expect(() => checkSegmentOffsets([], 5)).toThrow(RangeError);
    expect(() => checkSegmentOffsets([0, 6], 5)).toThrow(RangeError);
    expect(() => checkSegmentOffsets([0, 3, 2], 5)).toThrow(RangeError);
    expect(() => checkSegmentOffsets([0, 0, 5], 5)).not.toThrow();
  });
});
