/**
 * ATOMO's optimal sampling probabilities (Wang et al. 2018, §3; docs/design.md, "Water-filling").
 *
 * Minimising the variance Σ λᵢ²/pᵢ subject to Σ pᵢ = s and 0 < pᵢ ≤ 1 gives
 * pᵢ = min(1, |λᵢ|/τ) for a water level τ. Walking the atoms by decreasing
 * |λ|, each atom either fits under the level (and then so do all smaller
 * ones: they share the remaining budget in proportion to |λ|) or saturates
 * at p = 1 and spends one unit of budget.
 */

/** Checks that a budget s is usable: s > 0 (Infinity means "send every non-zero atom"). */
export function checkBudget(budget: number): void {
  if (!(budget > 0)) throw new RangeError(`ATOMO budget must be > 0, got ${budget}`);
}

/**
 * pᵢ = min(1, |λᵢ|/τ) with Σ pᵢ = min(s, #non-zero) by sorted water-filling
 * (docs/design.md, "Water-filling"). Zero atoms get p = 0; O(n log n).
 */
export function samplingProbabilities(magnitudes: ArrayLike<number>, budget: number): Float64Array {
  checkBudget(budget);
  const n = magnitudes.length;
  const probabilities = new Float64Array(n);
  const absolute = new Float64Array(n);
  let nonZero = 0;
  for (let i = 0; i < n; i++) {
    const a = Math.abs(magnitudes[i]!);
    if (!Number.isFinite(a)) throw new RangeError(`samplingProbabilities: non-finite magnitude at ${i}`);
    absolute[i] = a;
    if (a > 0) nonZero++;
  }
  if (nonZero === 0) return probabilities;
  // The water level depends only on the sorted magnitudes, so sort values
  // (a native numeric sort), not indices. Ascending: sorted[nonZero − 1] is
  // the largest; sortedTail[k] = Σ_{j ≤ k} sorted[j] is the sum of the atoms
  // not yet saturated when the walk reaches k, summed from the smallest up.
  const sorted = new Float64Array(nonZero);
  for (let i = 0, k = 0; i < n; i++) if (absolute[i]! > 0) sorted[k++] = absolute[i]!;
  sorted.sort();
  const sortedTail = new Float64Array(nonZero);
  let running = 0;
  for (let k = 0; k < nonZero; k++) sortedTail[k] = running += sorted[k]!;

  // Walk down from the largest atom: it either fits under the level
  // (s·|λ| ≤ Σ of the rest including itself) and then so do all smaller
  // ones, or it saturates at p = 1 and uses one unit of the budget.
  let remaining = budget;
  let k = nonZero - 1;
  while (k >= 0 && remaining * sorted[k]! > sortedTail[k]!) {
    remaining -= 1;
    k--;
  }
  if (k < 0) {
    // s ≥ #non-zero: every non-zero atom is sent exactly.
    for (let i = 0; i < n; i++) if (absolute[i]! > 0) probabilities[i] = 1;
    return probabilities;
  }
  // Atoms at or above the smallest saturated magnitude get 1 (ties are
  // treated alike); the rest share `remaining` in proportion to |λ|:
  // p = |λ|/τ with τ = Σ(unsaturated |λ|)/remaining.
  const saturation = k + 1 < nonZero ? sorted[k + 1]! : Number.POSITIVE_INFINITY;
  const perUnit = remaining / sortedTail[k]!;
  for (let i = 0; i < n; i++) {
    const a = absolute[i]!;
    if (a === 0) continue;
    probabilities[i] = a >= saturation ? 1 : Math.min(1, a * perUnit);
  }
  return probabilities;
}
