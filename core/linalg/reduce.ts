/**
 * Per-segment reductions of a float array: the CPU reference (and
 * specification) for shaders/reduce.wgsl.
 *
 * Segment s is x[offsets[s] .. offsets[s + 1]); offsets has one more entry
 * than there are segments, never decreases, and may repeat (an empty
 * segment). Per layer: offsets = cumulative layer sizes; per row of an r×c
 * matrix: offsets = 0, c, 2c, …, r·c (see uniformSegments).
 * These give the norms the codecs need: ‖g‖₂² for QSGD, max|g| for TernGrad,
 * ‖g‖₁ and ‖g‖₂ for water-filling budgets.
 */

/** What a segment is reduced to. Every op gives 0 for an empty segment. */
export type ReduceOp = 'sum' | 'sumOfSquares' | 'sumOfAbs' | 'maxAbs';

/** All reduce ops, for loops in tests and UIs. */
export const REDUCE_OPS: readonly ReduceOp[] = ['sum', 'sumOfSquares', 'sumOfAbs', 'maxAbs'];

/** Offsets of `count` consecutive segments of `length` elements each (e.g. the rows of a matrix). */
export function uniformSegments(count: number, length: number): Uint32Array {
  const offsets = new Uint32Array(count + 1);
  for (let s = 0; s <= count; s++) offsets[s] = s * length;
  return offsets;
}

/** Throws unless `offsets` describes segments inside an array of `length` elements. */
export function checkSegmentOffsets(offsets: ArrayLike<number>, length: number): void {
  if (offsets.length < 1) throw new RangeError('reduce: offsets needs at least one entry');
  for (let s = 0; s < offsets.length; s++) {
    const o = offsets[s]!;
    if (!Number.isInteger(o) || o < 0 || o > length)
      throw new RangeError(`reduce: offsets[${s}] = ${o} is outside [0, ${length}]`);
    if (s > 0 && o < offsets[s - 1]!) throw new RangeError(`reduce: offsets decrease at ${s}`);
  }
}

/**
 * Reduces each segment of x in Float64 (exact for maxAbs; one rounding per
 * addition at 2⁻⁵³ otherwise): the answer the GPU kernel is measured against.
 */
export function reduceSegments(op: ReduceOp, x: Float32Array, offsets: ArrayLike<number>): Float64Array {
  checkSegmentOffsets(offsets, x.length);
  const out = new Float64Array(offsets.length - 1);
  for (let s = 0; s < out.length; s++) {
    let acc = 0;
    const end = offsets[s + 1]!;
    for (let i = offsets[s]!; i < end; i++) {
      const v = x[i]!;
      if (op === 'sum') acc += v;
      else if (op === 'sumOfSquares') acc += v * v;
      else if (op === 'sumOfAbs') acc += Math.abs(v);
      else acc = Math.max(acc, Math.abs(v));
    }
    out[s] = acc;
  }
  return out;
}
