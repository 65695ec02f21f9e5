/**
 * The mean and the norm bound as a sum whose result depends on neither the
 * order nor the grouping of its terms (docs/design.md, "Aggregation"), so
 * one process summing every estimate and several processes each summing
 * their own workers' estimates into partial sums that a leader adds give the
 * same bits.
 *
 * Floating-point addition is not associative; integer addition is. So each
 * term t = fround(w·x) (w the contributor's weight, x an entry of its
 * estimate) is rounded once to an integer multiple of 2^−S, q = round(t·2^S),
 * and the q are added exactly. S is chosen per segment (one per parameter
 * tensor) from the round's largest |t| and contributor count n, so that
 * |t·2^S| < 2^51/n: every partial sum of these integers stays below 2^52,
 * so float64 adds them exactly. The mean of the segment is
 * fround(Σq · 2^−S / n). The rounding error is at most n·max|t|·2^−52 per
 * entry, the size of a plain float64 summation's own error. Rounding to
 * the nearest integer (ties to even) is (v + 1.5·2^52) − 1.5·2^52, exact
 * for |v| < 2^51 and cheaper than Math.round.
 *
 * The plan (weights and scales) needs statistics of every estimate: its
 * norm (the norm bound's median) and the largest magnitude in each segment.
 * Those are small, so a process sends them first and the partial sums after.
 */

/** What one estimate contributes to the plan: ‖x‖₂ (float64) and max |xᵢ| in each segment. */
export interface EstimateStats {
  readonly norm: number;
  readonly segmentMax: readonly number[];
}

/**
 * How a round's sum is taken: each contributor's weight (in the order of the stats given) and each segment's scale
 * exponent S.
 */
export interface SumPlan {
  readonly weights: readonly number[];
  readonly scales: readonly number[];
  /** n, the divisor of the mean. */
  readonly count: number;
  /** Contributors scaled down by the norm bound. */
  readonly clipped: number;
}

/** The sum rules: everything but the coordinate-wise ones. */
export type SumRule = { readonly kind: 'mean' } | { readonly kind: 'norm-bound'; readonly k: number };

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

/** End of segment s: the next segment's start, or the length. */
function segmentEnd(segments: readonly number[], s: number, length: number): number {
  return s + 1 < segments.length ? segments[s + 1]! : length;
}

/** The statistics of one flat estimate; `segments` are the start offsets of its tensors (the first is 0). */
export function estimateStats(estimate: Float32Array, segments: readonly number[]): EstimateStats {
  // One pass: the sum of squares in entry order, as norm2 takes it. Plain loops and locals: this runs once per
  // gradient.
  let squares = 0;
  const segmentMax: number[] = [];
  for (let s = 0; s < segments.length; s++) {
    const end = segmentEnd(segments, s, estimate.length);
    let max = 0;
    for (let i = segments[s]!; i < end; i++) {
      const x = estimate[i]!;
      squares += x * x;
      max = Math.max(max, Math.abs(x));
    }
    segmentMax.push(max);
  }
  return { norm: Math.sqrt(squares), segmentMax };
}

/** 1.5·2^52: adding and subtracting it rounds a float64 below 2^51 in magnitude to the nearest integer. */
const ROUNDER = 6755399441055744;

/** The smallest e with |x| < 2^e (x finite, non-zero). */
function exponentAbove(x: number): number {
  let e = Math.ceil(Math.log2(x));
  while (2 ** e <= x) e++;
  while (2 ** (e - 1) > x) e--;
  return e;
}

/**
 * The plan of a round under `rule`: the norm bound's weights min(1, k·M/‖xᵢ‖)
 * (M the lower median norm; 1 for the mean) and, per segment, the scale S
 * with n·max|fround(wᵢ·xᵢ)|·2^S < 2^51.
 */
export function planSum(rule: SumRule, stats: readonly EstimateStats[]): SumPlan {
  const n = stats.length;
  if (n === 0) throw new RangeError('nothing to aggregate');
  let weights: number[];
  if (rule.kind === 'norm-bound') {
    const bound = rule.k * lowerMedian(stats.map((s) => s.norm));
    weights = stats.map((s) => (s.norm > bound ? bound / s.norm : 1));
  } else {
    weights = stats.map(() => 1);
  }
  let countBits = 0;
  while (2 ** countBits < n) countBits++;
  const segmentCount = stats[0]!.segmentMax.length;
  const scales: number[] = [];
  for (let s = 0; s < segmentCount; s++) {
    let max = 0;
    stats.forEach((st, i) => {
      const w = weights[i]!;
      // fround and a positive factor are monotone: the largest term is the rounded, weighted largest entry.
      const t = w === 1 ? st.segmentMax[s]! : Math.fround(w * st.segmentMax[s]!);
      if (t > max) max = t;
    });
    scales.push(max === 0 ? 0 : 51 - countBits - exponentAbove(max));
  }
  return { weights, scales, count: n, clipped: weights.filter((w) => w < 1).length };
}

/**
 * Adds round(fround(weight·x)·2^S) (ties to even) for every entry of `estimate` into `into` (a sum of integers, one per
 * entry).
 */
export function accumulate(
  into: Float64Array,
  estimate: Float32Array,
  weight: number,
  plan: Pick<SumPlan, 'scales'>,
  segments: readonly number[],
): void {
  if (estimate.length !== into.length)
    throw new RangeError(`an estimate has ${estimate.length} entries, expected ${into.length}`);
  for (let s = 0; s < segments.length; s++) {
    const end = segmentEnd(segments, s, into.length);
    const factor = 2 ** plan.scales[s]!;
    if (weight === 1) {
      for (let i = segments[s]!; i < end; i++) into[i]! += estimate[i]! * factor + ROUNDER - ROUNDER;
    } else {
      for (let i = segments[s]!; i < end; i++)
        into[i]! += Math.fround(weight * estimate[i]!) * factor + ROUNDER - ROUNDER;
    }
  }
}

/** Adds a partial sum into another: exact, since both hold integers whose total stays below 2^53. */
export function addPartial(into: Float64Array, partial: Float64Array): void {
  if (partial.length !== into.length)
    throw new RangeError(`a partial sum has ${partial.length} entries, expected ${into.length}`);
  for (let i = 0; i < into.length; i++) into[i]! += partial[i]!;
}

/** The mean from the exact sum: fround(Σq · 2^−S / n) per entry. */
export function finishMean(
  sum: Float64Array,
  plan: Pick<SumPlan, 'scales' | 'count'>,
  segments: readonly number[],
): Float32Array {
  const out = new Float32Array(sum.length);
  const count = plan.count;
  for (let s = 0; s < segments.length; s++) {
    const end = segmentEnd(segments, s, sum.length);
    const unit = 2 ** -plan.scales[s]!;
    for (let i = segments[s]!; i < end; i++) out[i] = (sum[i]! * unit) / count;
  }
  return out;
}
