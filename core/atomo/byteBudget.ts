/**
 * Budgets by bytes (docs/design.md, "Budgets by bytes"): the variance of
 * ATOMO on one decomposition of one layer as a function of the bytes it
 * sends, and the split of a byte budget for the whole model across layers
 * (and, for atomo-auto, across decompositions) that minimises the summed
 * closed-form variance.
 *
 * A decomposition's water level τ fixes everything: pᵢ = min(1, |λᵢ|/τ),
 * the budget s = Σ pᵢ = k + S/τ (k atoms saturated, S = Σ of the others'
 * |λ|), the variance V = Σ λᵢ²(1/pᵢ − 1) = τS − Q (Q = Σ of the others'
 * λ²) and the expected bytes B (core/codec/sizes.ts). dV/ds = −τ², so with
 * a cost of a bytes per atom the variance falls by τ²/a per byte, and the
 * split that minimises Σ V subject to Σ B = budget gives every layer the
 * same rate μ: τ = √(μ·a) (a Lagrangian water-filling across layers). A
 * layer may also go dense (float32: V = 0 at its fixed bytes), which is what
 * the split picks for a small tensor such as a bias when that is cheapest.
 */
import { denseLayerBytes, expectedEntryBodyBytes, expectedGapBytes, spectralBodyBytes } from '../codec/sizes';
import { HEADER_BYTES } from '../codec/header';
import type { Decomposition, Shape } from './types';

/**
 * Levels tried one by one above τ* by tauAtRate (one per atom that would no
 * longer saturate) before the steps grow: a layer of many similar
 * magnitudes (the DCT of a dense layer) would otherwise be scanned for
 * thousands, 400 times per split.
 */
const SATURATION_SCAN = 64;

/** One point of a curve: what a water level τ costs and buys. */
export interface CurvePoint {
  /** The water level; 0 sends every non-zero atom exactly. */
  readonly tau: number;
  /** s = Σ pᵢ, the budget to hand to the sampler (Infinity when τ = 0: every non-zero atom). */
  readonly budget: number;
  /** Atoms with p = 1. */
  readonly saturated: number;
  /** Closed-form E‖ĝ − g‖². */
  readonly variance: number;
  /** Expected bytes of the layer, header included. */
  readonly bytes: number;
}

/** ATOMO on one decomposition of one layer: variance and expected bytes as functions of τ. */
export class VarianceCurve {
  readonly decomposition: Decomposition;
  readonly shape: Shape;
  /** λ in atom order (their positions set the entry-wise gaps). */
  readonly #coefficients: ArrayLike<number>;
  /**
   * Non-zero |λ|, descending, with tail sums #tail[i] = Σ_{j≥i} |λ| and
   * #tailSq[i] = Σ_{j≥i} λ², summed from the smallest up so that the
   * unsaturated atoms' sums carry no cancellation (V = τS − Q is then exact
   * to rounding, 0 when every atom is sent).
   */
  readonly #sorted: Float64Array;
  readonly #tail: Float64Array;
  readonly #tailSq: Float64Array;
  /**
   * Spectral: bytes per atom; entry-wise and DCT: bytes of an atom's gap varint (refine() measures it), without its
   * 2-bit code.
   */
  #perAtom: number;
  /** P(K = k) for a spectral layer's count of atoms kept, k = 0..atoms (work space of #spectralBytes). */
  readonly #countDistribution: Float64Array;

  constructor(decomposition: Decomposition, shape: Shape, coefficients: ArrayLike<number>) {
    this.decomposition = decomposition;
    this.shape = shape;
    this.#coefficients = coefficients;
    let nonZero = 0;
    for (let i = 0; i < coefficients.length; i++) {
      const a = Math.abs(coefficients[i]!);
      if (!Number.isFinite(a)) throw new RangeError(`VarianceCurve: non-finite coefficient at ${i}`);
      if (a > 0) nonZero++;
    }
    const sorted = new Float64Array(nonZero);
    for (let i = 0, k = 0; i < coefficients.length; i++) {
      const a = Math.abs(coefficients[i]!);
      if (a > 0) sorted[k++] = a;
    }
    this.#sorted = sorted.sort().reverse();
    this.#countDistribution = new Float64Array(decomposition === 'spectral' ? nonZero + 1 : 0);
    const n = this.#sorted.length;
    this.#tail = new Float64Array(n + 1);
    this.#tailSq = new Float64Array(n + 1);
    for (let i = n - 1; i >= 0; i--) {
      const a = this.#sorted[i]!;
      this.#tail[i] = this.#tail[i + 1]! + a;
      this.#tailSq[i] = this.#tailSq[i + 1]! + a * a;
    }
    // Spectral: bytes per atom (u, v and σ/p). Entry-wise and DCT: the bytes of an atom's gap varint, measured by
    // refine().
    this.#perAtom = decomposition === 'spectral' ? spectralBodyBytes(1, shape) - spectralBodyBytes(0, shape) : 1;
  }

  /** Number of non-zero atoms: a budget this large sends the layer exactly. */
  get atoms(): number {
    return this.#sorted.length;
  }

  /** Σ|λ|: for spectral atoms the nuclear norm ‖G‖_*. */
  get l1(): number {
    return this.#tail[0]!;
  }

  /** Bytes the next expected atom costs (the rate a = dB/ds between saturations). */
  get marginalBytes(): number {
    return this.decomposition === 'spectral' ? this.#perAtom : this.#perAtom + 0.25;
  }

  /** What water level τ costs and buys (τ = 0: exact). */
  point(tau: number): CurvePoint {
    const n = this.#sorted.length;
    if (n === 0)
      return { tau, budget: Number.POSITIVE_INFINITY, saturated: 0, variance: 0, bytes: this.#bytes(0, 0, tau) };
    // k = #{|λ| ≥ τ}: the saturated atoms (p = 1), by binary search on the descending magnitudes.
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#sorted[mid]! >= tau) lo = mid + 1;
      else hi = mid;
    }
    const k = lo;
    if (k === n)
      return { tau, budget: Number.POSITIVE_INFINITY, saturated: n, variance: 0, bytes: this.#bytes(n, n, tau) };
    const rest = this.#tail[k]!;
    const restSq = this.#tailSq[k]!;
    const budget = k + rest / tau;
    return {
      tau,
      budget,
      saturated: k,
      variance: Math.max(0, tau * rest - restSq),
      bytes: this.#bytes(budget, k, tau),
    };
  }

  /**
   * The water level that minimises V(τ) + μ·B(τ), the variance plus μ per
   * byte. Between saturations both are smooth and the minimum is at
   * τ* = √(μ·a), a the bytes of an atom; but an entry-wise or DCT atom that
   * saturates also sends its own 4-byte value, so a level just above a
   * magnitude (one atom fewer saturated) can cost less: those are tried
   * upward from τ* until the smooth part alone exceeds the best found (it
   * only grows above τ*). Below one atom on average τ's own bytes make an
   * atom dearer, which a second τ* accounts for.
   */
  tauAtRate(mu: number): number {
    const star = Math.sqrt(mu * this.marginalBytes);
    if (this.decomposition === 'spectral') return star;
    let atStar = this.point(star);
    let bestTau = star;
    let best = atStar.variance + mu * atStar.bytes;
    // Below one atom on average, τ's 4 bytes and the code byte's rounding grow with the budget too: a ≈
    // marginalBytes + 4 + 3/8.
    const sparse = Math.sqrt(mu * (this.marginalBytes + 4 + 3 / 8));
    const atSparse = this.point(sparse);
    if (atSparse.budget < 1 && atSparse.variance + mu * atSparse.bytes < best) {
      atStar = atSparse;
      bestTau = sparse;
      best = atSparse.variance + mu * atSparse.bytes;
    }
    // Every level for the first SATURATION_SCAN atoms above τ*, then ever sparser (steps growing by a sixteenth each).
    let step = 1;
    for (let k = atStar.saturated - 1; k >= 0; k -= Math.floor(step)) {
      if (atStar.saturated - k > SATURATION_SCAN) step *= 17 / 16;
      // Just above |λ_k|, so that atom k is no longer saturated.
      const tau = this.#sorted[k]! * (1 + 1e-12);
      const rest = this.#tail[k]!;
      const restSq = this.#tailSq[k]!;
      const budget = k + rest / tau;
      const variance = Math.max(0, tau * rest - restSq);
      // A lower bound of the cost there (atoms k.. unsaturated): V + μ(header + count + a·s), which only grows above
      // τ*.
      if (variance + mu * (HEADER_BYTES + 4 + this.marginalBytes * budget) >= best) break;
      const cost = variance + mu * this.#bytes(budget, k, tau);
      if (cost < best) {
        best = cost;
        bestTau = tau;
      }
    }
    return bestTau;
  }

  /** The water level whose expected bytes are `bytes` (0 when even the exact layer fits), by bisection on log τ. */
  tauForBytes(bytes: number): number {
    const n = this.#sorted.length;
    if (n === 0 || this.point(0).bytes <= bytes) return 0;
    // Between half the smallest |λ| (everything saturated) and far above Σ|λ| (s ≈ 10⁻⁹): bytes fall as τ
    // grows.
    let lo = Math.log(this.#sorted[n - 1]! / 2);
    let hi = Math.log(this.#tail[0]! * 1e9);
    for (let i = 0; i < 64; i++) {
      const mid = (lo + hi) / 2;
      if (this.point(Math.exp(mid)).bytes > bytes) lo = mid;
      else hi = mid;
    }
    return Math.exp(hi);
  }

  /**
   * Measures the gap varints at water level τ exactly (expectedGapBytes, from
   * the atoms' positions), so that point() prices this decomposition's atoms
   * at what they cost near τ; spectral atoms have no gaps.
   */
  refine(tau: number): void {
    if (this.decomposition === 'spectral' || this.#sorted.length === 0) return;
    const lambda = this.#coefficients;
    const probabilities = new Float64Array(lambda.length);
    let expected = 0;
    for (let i = 0; i < lambda.length; i++) {
      const a = Math.abs(lambda[i]!);
      const p = tau === 0 ? (a > 0 ? 1 : 0) : Math.min(1, a / tau);
      probabilities[i] = p;
      expected += p;
    }
    if (expected > 0) this.#perAtom = expectedGapBytes(probabilities) / expected;
  }

  #bytes(budget: number, saturated: number, tau: number): number {
    const dense = denseLayerBytes(this.shape);
    const exact = Number.isFinite(budget) ? budget : this.#sorted.length;
    if (this.decomposition === 'spectral') return this.#spectralBytes(tau, dense);
    return Math.min(dense, HEADER_BYTES + expectedEntryBodyBytes(saturated, exact - saturated, this.#perAtom * exact));
  }

  /**
   * E[bytes] of a spectral layer, exactly: the count K of atoms kept is a sum
   * of Bernoulli(pᵢ) (a Poisson-binomial, by dynamic programming over the few
   * atoms, rank ≤ batch), and a message whose atoms would outgrow float32 goes
   * dense (core/codec encodeForWire), so E min(empty + a·K, dense).
   */
  #spectralBytes(tau: number, dense: number): number {
    const empty = HEADER_BYTES + spectralBodyBytes(0, this.shape);
    const n = this.#sorted.length;
    const distribution = this.#countDistribution;
    distribution.fill(0);
    distribution[0] = 1;
    for (let i = 0; i < n; i++) {
      const p = tau === 0 ? 1 : Math.min(1, this.#sorted[i]! / tau);
      for (let k = i + 1; k >= 1; k--) distribution[k] = distribution[k]! * (1 - p) + distribution[k - 1]! * p;
      distribution[0] = distribution[0]! * (1 - p);
    }
    let expected = 0;
    for (let k = 0; k <= n; k++) expected += distribution[k]! * Math.min(dense, empty + this.#perAtom * k);
    return expected;
  }
}

/** How a layer is sent under a split: dense float32, or one decomposition's curve at a water level. */
export interface LayerPlan {
  /** The decomposition, or 'dense'. */
  readonly option: Decomposition | 'dense';
  /** The curve chosen (null for dense). */
  readonly curve: VarianceCurve | null;
  readonly point: CurvePoint;
}

/** The candidates of one layer: its shape (dense is always possible) and one curve per decomposition considered. */
export interface LayerCurves {
  readonly shape: Shape;
  readonly curves: readonly VarianceCurve[];
}

function densePlan(shape: Shape): LayerPlan {
  return {
    option: 'dense',
    curve: null,
    point: { tau: 0, budget: Number.POSITIVE_INFINITY, saturated: 0, variance: 0, bytes: denseLayerBytes(shape) },
  };
}

function curvePlan(curve: VarianceCurve, tau: number): LayerPlan {
  return { option: curve.decomposition, curve, point: curve.point(tau) };
}

/** The option of a layer that minimises V + μ·B at rate μ: each curve at τ = √(μa), or dense. */
function bestAt(layer: LayerCurves, mu: number): LayerPlan {
  let best = densePlan(layer.shape);
  let cost = mu * best.point.bytes;
  for (const curve of layer.curves) {
    const plan = curvePlan(curve, curve.tauAtRate(mu));
    const c = plan.point.variance + mu * plan.point.bytes;
    if (c < cost) {
      best = plan;
      cost = c;
    }
  }
  return best;
}

const totalBytes = (plans: readonly LayerPlan[]) => plans.reduce((sum, p) => sum + p.point.bytes, 0);

/**
 * The rate μ (searched on ln μ) at which plans(μ) fits the budget, and those
 * plans: the largest total at or below the budget. Totals fall as μ grows.
 */
function fitRate(plans: (mu: number) => LayerPlan[], budget: number): { mu: number; plans: LayerPlan[] } {
  let lo = -700;
  let hi = 700;
  const atLo = plans(Math.exp(lo));
  if (totalBytes(atLo) <= budget) return { mu: Math.exp(lo), plans: atLo };
  let best = plans(Math.exp(hi));
  if (totalBytes(best) > budget) return { mu: Math.exp(hi), plans: best };
  // 64 halvings of ln μ ∈ [−700, 700]: μ to 1e-16 relative, below any byte the totals can tell apart.
  for (let i = 0; i < 64; i++) {
    const mid = (lo + hi) / 2;
    const at = plans(Math.exp(mid));
    if (totalBytes(at) > budget) lo = mid;
    else {
      hi = mid;
      best = at;
    }
  }
  return { mu: Math.exp(hi), plans: best };
}

/** Times the split re-measures the gap varints of its entry-wise and DCT curves at the water levels it found. */
const REFINEMENTS = 1;

/**
 * Splits `byteBudget` (expected bytes of the whole gradient, headers
 * included) across `layers`, each sent dense or on one of its curves,
 * minimising the summed closed-form variance; then, for a layer with more
 * than one curve (atomo-auto), sends the bytes it was given on the
 * decomposition whose variance at those bytes is lowest (dense when they
 * reach float32). Deterministic: the same curves give the same plans.
 */
export function splitByteBudget(layers: readonly LayerCurves[], byteBudget: number): LayerPlan[] {
  if (!(byteBudget > 0)) throw new RangeError(`byte budget must be > 0, got ${byteBudget}`);
  let plans: LayerPlan[] = [];
  for (let round = 0; round <= REFINEMENTS; round++) {
    // The choice of option per layer at the rate that fits (it may jump between options) ...
    const chosen = fitRate((mu) => layers.map((layer) => bestAt(layer, mu)), byteBudget).plans;
    // ... then, those options kept, the rate that fits them.
    const fitted = fitRate(
      (mu) => chosen.map((plan) => (plan.curve === null ? plan : curvePlan(plan.curve, plan.curve.tauAtRate(mu)))),
      byteBudget,
    );
    plans = fitted.plans;
    if (round === REFINEMENTS) break;
    for (const layer of layers) for (const curve of layer.curves) curve.refine(curve.tauAtRate(fitted.mu));
  }
  plans = spendLeftover(plans, byteBudget);
  return plans.map((plan, l) => {
    const layer = layers[l]!;
    if (layer.curves.length < 2) return plan;
    return pickAtBytes(layer, plan);
  });
}

/**
 * The rate's fit stops at the feasible side of a jump (a saturating atom's
 * 4 bytes, a layer changing option): the bytes left go to the layer whose
 * variance they lower most, on its own curve (continuous in bytes).
 */
function spendLeftover(plans: LayerPlan[], byteBudget: number): LayerPlan[] {
  const leftover = byteBudget - totalBytes(plans);
  if (!(leftover > 1e-9 * byteBudget)) return plans;
  let best = -1;
  let bestGain = 0;
  let bestPlan: LayerPlan | null = null;
  plans.forEach((plan, l) => {
    if (plan.curve === null) return;
    const more = curvePlan(plan.curve, plan.curve.tauForBytes(plan.point.bytes + leftover));
    const gain = plan.point.variance - more.point.variance;
    if (gain > bestGain && more.point.bytes <= plan.point.bytes + leftover * (1 + 1e-9)) {
      best = l;
      bestGain = gain;
      bestPlan = more;
    }
  });
  return best < 0 ? plans : plans.map((plan, l) => (l === best ? bestPlan! : plan));
}

/** The option of `layer` with the lowest closed-form variance at the bytes `plan` was given (ties keep `plan`'s). */
function pickAtBytes(layer: LayerCurves, plan: LayerPlan): LayerPlan {
  const bytes = plan.point.bytes;
  let best = plan;
  const dense = densePlan(layer.shape);
  if (dense.point.bytes <= bytes && dense.point.variance < best.point.variance) best = dense;
  for (const curve of layer.curves) {
    const candidate = curvePlan(curve, curve.tauForBytes(bytes));
    if (candidate.point.variance < best.point.variance) best = candidate;
  }
  return best;
}
