/**
 * How a round's unbiased estimates become one update. The plain mean is what
 * synchronous SGD does, and a single worker can move it anywhere: one
 * estimate scaled by 10⁶ (finite, so it decodes) is the update. The robust
 * rules bound what any one worker can do:
 *
 *   norm-bound    ĝᵢ ← ĝᵢ · min(1, k·M / ‖ĝᵢ‖), M the round's (lower) median
 *                 norm, then the mean. Honest estimates of one round share
 *                 the gradient and the scheme, so their norms √(‖g‖² + Var)
 *                 sit within a small factor of each other and are untouched;
 *                 an attacker's weight in the mean is at most k·M / n.
 *   median        per coordinate, the median of the n values (the mean of
 *                 the two middle ones when n is even).
 *   trimmed-mean  per coordinate, the mean after dropping ⌊trim·n⌋ values
 *                 at each end.
 *
 * The lower median (the ⌈n/2⌉-th smallest) is used for M so that with two
 * workers the smaller norm sets the bound: scaled-up attackers push norms up,
 * never down. Inputs are the contributors' flat estimates in ascending worker
 * id; sums are in float64, so the result does not depend on arrival order.
 */
import type { AggregationRule } from '../schema/runConfig';

/** The aggregate and what the rule did. */
export interface Aggregate {
  readonly value: Float32Array;
  /** Estimates scaled down by the norm bound (0 for the other rules). */
  readonly clipped: number;
}

/** ‖x‖₂ in float64. */
export function norm2(x: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < x.length; i++) sum += x[i]! * x[i]!;
  return Math.sqrt(sum);
}

/** The ⌈n/2⌉-th smallest of `values` (n ≥ 1). */
export function lowerMedian(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/** Combines `estimates` (each of `length` entries, at least one) by `rule`. */
export function aggregate(rule: AggregationRule, estimates: readonly Float32Array[], length: number): Aggregate {
  if (estimates.length === 0) throw new RangeError('nothing to aggregate');
  for (const e of estimates) if (e.length !== length) throw new RangeError(`an estimate has ${e.length} entries, expected ${length}`);
  switch (rule.kind) {
    case 'mean':
      return {
        value: weightedMean(
          estimates,
          length,
          estimates.map(() => 1),
        ),
        clipped: 0,
      };
    case 'norm-bound': {
      const norms = estimates.map(norm2);
      const bound = rule.k * lowerMedian(norms);
      const weights = norms.map((n) => (n > bound ? bound / n : 1));
      return { value: weightedMean(estimates, length, weights), clipped: weights.filter((w) => w < 1).length };
    }
    case 'median':
      return { value: perCoordinate(estimates, length, median), clipped: 0 };
    case 'trimmed-mean': {
      const drop = Math.floor(rule.trim * estimates.length);
      return { value: perCoordinate(estimates, length, (sorted) => meanOf(sorted, drop, sorted.length - drop)), clipped: 0 };
    }
  }
}

/** (1/n) Σ wᵢ·xᵢ, summed in float64 in the given order. */
function weightedMean(estimates: readonly Float32Array[], length: number, weights: readonly number[]): Float32Array {
  const sum = new Float64Array(length);
  estimates.forEach((e, w) => {
    const weight = weights[w]!;
    for (let i = 0; i < length; i++) sum[i]! += weight * e[i]!;
  });
  const out = new Float32Array(length);
  const n = estimates.length;
  for (let i = 0; i < length; i++) out[i] = sum[i]! / n;
  return out;
}

/** Applies `reduce` to the sorted values of each coordinate. */
function perCoordinate(estimates: readonly Float32Array[], length: number, reduce: (sorted: Float64Array) => number): Float32Array {
  const n = estimates.length;
  const column = new Float64Array(n);
  const out = new Float32Array(length);
  for (let i = 0; i < length; i++) {
    for (let w = 0; w < n; w++) column[w] = estimates[w]![i]!;
    column.sort();
    out[i] = reduce(column);
  }
  return out;
}

function median(sorted: Float64Array): number {
  const n = sorted.length;
  const mid = n >> 1;
  return n % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function meanOf(sorted: Float64Array, from: number, to: number): number {
  let sum = 0;
  for (let i = from; i < to; i++) sum += sorted[i]!;
  return sum / (to - from);
}
