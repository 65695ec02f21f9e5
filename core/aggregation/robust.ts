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
 * never down. Inputs are the contributors' flat estimates (in any order).
 * The mean and the norm bound are exact fixed-point sums (exactSum.ts), so
 * their result depends on neither the order nor the grouping of the
 * estimates: a cluster's partial sums give the same bits as one process
 * (docs/design.md, "Aggregation"). The coordinate-wise rules sort each
 * coordinate, which fixes their order too.
 */
import type { AggregationRule } from '../schema/runConfig';
import { accumulate, estimateStats, finishMean, planSum } from './exactSum';

export { lowerMedian, norm2 } from './exactSum';

/** The aggregate and what the rule did. */
export interface Aggregate {
  readonly value: Float32Array;
  /** Estimates scaled down by the norm bound (0 for the other rules). */
  readonly clipped: number;
  /**
   * Values per coordinate left out of the average (ruleDropped): n − 1 (odd n) or n − 2 (even n) for the median,
   * 2·⌊trim·n⌋ for the trimmed mean, 0 for the mean and the norm bound (which scale, never drop).
   */
  readonly dropped: number;
}

/** How many of `n` values per coordinate `rule` leaves out of its average (Aggregate.dropped). */
export function ruleDropped(rule: AggregationRule, n: number): number {
  switch (rule.kind) {
    case 'mean':
    case 'norm-bound':
      return 0;
    case 'median':
      return n % 2 === 1 ? n - 1 : n - 2;
    case 'trimmed-mean':
      return 2 * Math.floor(rule.trim * n);
  }
}

/**
 * Combines `estimates` (each of `length` entries, at least one) by `rule`;
 * `segments` are the start offsets of the parameter tensors (each gets its
 * own fixed-point scale), one segment by default.
 */
export function aggregate(
  rule: AggregationRule,
  estimates: readonly Float32Array[],
  length: number,
  segments: readonly number[] = [0],
): Aggregate {
  if (estimates.length === 0) throw new RangeError('nothing to aggregate');
  for (const e of estimates)
    if (e.length !== length) throw new RangeError(`an estimate has ${e.length} entries, expected ${length}`);
  switch (rule.kind) {
    case 'mean':
    case 'norm-bound': {
      const plan = planSum(
        rule,
        estimates.map((e) => estimateStats(e, segments)),
      );
      const sum = new Float64Array(length);
      estimates.forEach((e, i) => accumulate(sum, e, plan.weights[i]!, plan, segments));
      return { value: finishMean(sum, plan, segments), clipped: plan.clipped, dropped: 0 };
    }
    case 'median':
      return {
        value: perCoordinate(estimates, length, median),
        clipped: 0,
        dropped: ruleDropped(rule, estimates.length),
      };
    case 'trimmed-mean': {
      const drop = Math.floor(rule.trim * estimates.length);
      return {
        value: perCoordinate(estimates, length, (sorted) => meanOf(sorted, drop, sorted.length - drop)),
        clipped: 0,
        dropped: 2 * drop,
      };
    }
  }
}

/** Applies `reduce` to the sorted values of each coordinate. */
function perCoordinate(
  estimates: readonly Float32Array[],
  length: number,
  reduce: (sorted: Float64Array) => number,
): Float32Array {
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
