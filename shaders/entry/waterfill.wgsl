// ATOMO's sampling probabilities of one layer's entries (docs/design.md):
// pᵢ = min(1, |gᵢ|/τ) with Σ pᵢ = min(s, #non-zero), zeros get p = 0.
// CPU reference: core/atomo/waterfilling.ts samplingProbabilities (sorted
// water-filling); a GPU sort of 10⁵ entries per round would cost more than
// the search below. Host: client/gpu/kernels/entry.ts.
//
// One workgroup (WORKGROUP_SIZE invocations) per layer (one dispatch per layer):
//  1. one pass: #non-zero, Σ|g|, Σg², min non-zero |g| (and max |g|);
//  2. s ≥ #non-zero: every non-zero entry gets p = 1 (sent exactly);
//  3. max |g|·s ≤ Σ|g|: nothing saturates and τ = Σ|g|/s (no search; the
//     usual case for a small budget on a large layer);
//     else bisection on the water level τ over the bit patterns of positive
//     f32 (monotone in the value): f(τ) = Σ min(1, |g|/τ) is non-increasing,
//     f(min non-zero) = #non-zero > s and f(τ) ≤ Σ|g|/τ, so
//     τ ∈ (min non-zero, Σ|g|/s]. At most 31 halvings (measured 25–29)
//     leave two adjacent f32 values lo < hi with f(lo) > s ≥ f(hi): no
//     entry lies strictly between, so the saturated set {|g| ≥ τ*} is
//     exactly {|g| ≥ hi};
//  4. the closed form of that set, as the CPU does: with c saturated entries
//     and T = Σ of the others, p = |g|·(s − c)/T, so Σ p = s up to f32
//     rounding of T (the bisection's own f32 error only matters where an
//     entry sits within rounding of the level, where p ≈ 1 either way).
// The final pass writes p and the layer's statistics: Σ p, the closed-form
// variance Σ g²(1/p − 1) (docs/design.md) and ‖g‖².
//
// Reductions: each invocation folds a strided run in chunks of 32 (the f32
// error of a chunked sum stays ≈ 50 ulp of the total however long the layer;
// entry/chunked_sum.wgsl, with the layout of `stats`),
// then invocation 0 folds the WORKGROUP_SIZE partials in order and broadcasts the total
// with workgroupUniformLoad: two barriers per reduction, not a log₂ tree's 9,
// because on SwiftShader every barrier is a switch of every invocation group.

struct Params {
  offset: u32, // first entry of the layer in `gradient`
  n: u32,      // entries of the layer (< 2²⁴: counts are exact in f32)
  slot: u32,   // where the layer's statistics go: stats[slot·STATS …]
  budget: f32, // s, already min(s, n) on the host (so never infinite)
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> gradient: array<f32>;
@group(0) @binding(2) var<storage, read_write> probabilities: array<f32>; // n × f32
@group(0) @binding(3) var<storage, read_write> stats: array<f32>;

// Invocations per workgroup: 256 on a GPU; the host sets 64 on SwiftShader,
// where a barrier switches every 4-invocation group (4× cheaper at 64).
override WORKGROUP_SIZE: u32 = 256u;

var<workgroup> partials: array<vec4<f32>, WORKGROUP_SIZE>;
var<workgroup> total: vec4<f32>;

// Sum of every invocation's `value` (component w: max), the same on all.
fn workgroupTotal(local: u32, value: vec4<f32>) -> vec4<f32> {
  partials[local] = value;
  workgroupBarrier();
  if (local == 0u) {
    // Start from the first partial: w is a max of negative values, so 0 is no identity for it.
    var sum = partials[0];
    for (var i = 1u; i < WORKGROUP_SIZE; i++) {
      let part = partials[i];
      sum = vec4<f32>(sum.xyz + part.xyz, max(sum.w, part.w));
    }
    total = sum;
  }
  return workgroupUniformLoad(&total);
}

// Σ min(1, |g|/τ) over this invocation's strided run, in chunks.
fn localMass(local: u32, tau: f32) -> f32 {
  let inverse = 1.0 / tau;
  var sum = chunkedSum();
  for (var i = local; i < params.n; i += WORKGROUP_SIZE) {
    addTerm(&sum, min(1.0, abs(gradient[params.offset + i]) * inverse));
  }
  return totalOf(sum);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) local: u32) {
  let n = params.n;
  let s = params.budget;

  // 1. #non-zero, Σ|g|, Σg² and −min non-zero |g| (max of the negation, so one max slot).
  var count = 0.0;
  var localAbs = chunkedSum();
  var sumSq = chunkedSum();
  var negMin = -3.40282346e38;
  var maxAbs = 0.0;
  for (var i = local; i < n; i += WORKGROUP_SIZE) {
    let a = abs(gradient[params.offset + i]);
    maxAbs = max(maxAbs, a);
    if (a > 0.0) {
      count += 1.0;
      negMin = max(negMin, -a);
    }
    addTerm(&localAbs, a);
    addTerm(&sumSq, a * a);
  }
  let first = workgroupTotal(local, vec4<f32>(count, totalOf(localAbs), totalOf(sumSq), negMin));
  let nonZero = first.x;
  let sumAbs = first.y;
  let normSq = first.z;
  let largest = workgroupTotal(local, vec4<f32>(0.0, 0.0, 0.0, maxAbs)).w;

  // 2–4. The level: all saturated (s ≥ #non-zero), none saturated, or bisection then the closed form.
  var saturation = 0.0; // entries with |g| ≥ saturation get p = 1
  var perUnit = 0.0;    // the others get |g|·perUnit = |g|/τ
  var steps = 0u;
  var saturated = nonZero;
  if (nonZero > 0.0 && s < nonZero && largest * s <= sumAbs) {
    // Nothing saturates (the CPU's walk stops at its first atom): p = |g|·s/Σ|g| ≤ 1.
    saturation = 3.40282346e38;
    saturated = 0.0;
    perUnit = s / sumAbs;
  } else if (nonZero > 0.0 && s < nonZero) {
    var lo = bitcast<u32>(-first.w);
    // Σ|g|/s rounded up a little: f(hi) ≤ Σ|g|/hi < s for certain.
    var hi = max(bitcast<u32>(sumAbs / s * 1.0009765625), lo + 1u);
    loop {
      if (hi - lo <= 1u) {
        break;
      }
      let mid = lo + (hi - lo) / 2u;
      let mass = workgroupTotal(local, vec4<f32>(localMass(local, bitcast<f32>(mid)), 0.0, 0.0, 0.0)).x;
      if (mass > s) {
        lo = mid;
      } else {
        hi = mid;
      }
      steps++;
    }
    saturation = bitcast<f32>(hi);
    // c = #{|g| ≥ hi} and T = Σ of the other |g|.
    var c = 0.0;
    var tail = chunkedSum();
    for (var i = local; i < n; i += WORKGROUP_SIZE) {
      let a = abs(gradient[params.offset + i]);
      if (a >= saturation) {
        c += 1.0;
      } else {
        addTerm(&tail, a);
      }
    }
    let split = workgroupTotal(local, vec4<f32>(c, totalOf(tail), 0.0, 0.0));
    saturated = split.x;
    // f(hi) ≤ s makes c < s whenever T > 0; the max only guards f32 rounding.
    perUnit = select(0.0, max(s - saturated, 0.0) / split.y, split.y > 0.0);
  }

  // Final pass: p, Σp and Σ g²(1/p − 1).
  // A zero entry adds 0 to the variance, so both sums fold at the same steps.
  var sumP = chunkedSum();
  var variance = chunkedSum();
  for (var i = local; i < n; i += WORKGROUP_SIZE) {
    let g = gradient[params.offset + i];
    let a = abs(g);
    var p = 0.0;
    var v = 0.0;
    if (a > 0.0) {
      p = select(min(1.0, a * perUnit), 1.0, a >= saturation);
      // perUnit could underflow to 0 only for a degenerate budget; a non-zero
      // entry must keep p > 0 or the estimate would be biased.
      p = max(p, 1.1754944e-38);
      v = g * g * (1.0 / p - 1.0);
    }
    probabilities[i] = p;
    addTerm(&sumP, p);
    addTerm(&variance, v);
  }
  let last = workgroupTotal(local, vec4<f32>(totalOf(sumP), totalOf(variance), 0.0, 0.0));
  if (local == 0u) {
    let base = params.slot * STATS;
    stats[base + 0u] = last.x;
    stats[base + 1u] = last.y;
    stats[base + 2u] = normSq;
    stats[base + 4u] = select(0.0, 1.0 / perUnit, perUnit > 0.0);
    stats[base + 5u] = saturated;
    stats[base + 6u] = nonZero;
    stats[base + 7u] = f32(steps);
  }
}
