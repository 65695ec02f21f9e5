// The orthonormal n-point DCT-II matrix, Dₙ[k][i] = αₖ cos(π(2i + 1)k / 2n)
// (core/linalg/dct.ts, dctMatrix; docs/design.md, "Decompositions"), row-major,
// one invocation per entry. The host (client/gpu/kernels/dct.ts) turns a
// gradient G into its coefficients C = D_m G D_nᵀ with two products of the
// tiled matmul; this kernel makes the bases on the device, once per size.
//
// Accuracy: WGSL promises only 2⁻¹¹ absolute for cos, so the angle is
// reduced exactly in integers: θ = 2π·p/N with p = (2i + 1)k mod N, N = 4n,
// folded by cos's symmetries to ±cos φ or ±sin φ with φ ∈ [0, π/4], where a
// Taylor polynomial is within f32 rounding (the first omitted terms are
// below 3e-8). αₖ comes from the host, rounded from float64.

struct Params {
  n: u32,
  alpha0: f32, // √(1/n)
  alpha: f32,  // √(2/n)
  _pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> basis: array<f32>; // n × n

override WORKGROUP_SIZE: u32 = 256u;

const PI: f32 = 3.14159265358979;

fn itemCount() -> u32 {
  return params.n * params.n;
}

// cos φ and sin φ for φ ∈ [0, π/4], to f32 rounding.
fn cosQuarter(phi: f32) -> f32 {
  let x = phi * phi;
  return 1.0 + x * (-1.0 / 2.0 + x * (1.0 / 24.0 + x * (-1.0 / 720.0 + x * (1.0 / 40320.0 + x * (-1.0 / 3628800.0)))));
}

fn sinQuarter(phi: f32) -> f32 {
  let x = phi * phi;
  return phi * (1.0 + x * (-1.0 / 6.0 + x * (1.0 / 120.0 + x * (-1.0 / 5040.0 + x * (1.0 / 362880.0)))));
}

// cos(2π p / 4n) for an integer p in [0, 4n).
fn cosTurn(p: u32, n: u32) -> f32 {
  let full = 4u * n;
  let half = min(p, full - p);   // cos(2π − θ) = cos θ: p ∈ [0, 2n]
  var sign = 1.0;
  var quarter = half;            // ∈ [0, n] after the next fold
  if (half > n) {
    quarter = 2u * n - half;     // cos(π − θ) = −cos θ
    sign = -1.0;
  }
  // θ = π·quarter / 2n ∈ [0, π/2]; above π/4, cos θ = sin(π/2 − θ).
  if (2u * quarter <= n) {
    return sign * cosQuarter(PI * f32(quarter) / f32(2u * n));
  }
  return sign * sinQuarter(PI * f32(n - quarter) / f32(2u * n));
}

// Entry i of row k (the frame, main, is common/grid.wgsl).
fn item(e: u32) {
  let n = params.n;
  let k = e / n;
  let i = e % n;
  // (2i + 1)k mod 4n without overflow: both factors are reduced first (n < 2¹⁵).
  let p = ((2u * i + 1u) % (4u * n)) * (k % (4u * n)) % (4u * n);
  basis[e] = select(params.alpha, params.alpha0, k == 0u) * cosTurn(p, n);
}
