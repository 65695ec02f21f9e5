// Stream addressing and the integer Bernoulli test: the WGSL twin of
// core/rng/stream.ts. A shared fragment (needs structs.wgsl and common/philox.wgsl
// before it; client/gpu/kernels/common.ts puts them there).
//
// A draw is addressed by (run seed, worker, round, layer, atom index):
//   key     = (seed, worker)
//   counter = (atom index, round, layer, 0)
// and uses the first Philox output word. Same address, same bits as the CPU.

// The 32 random bits of atom `index` of a stream (randomBits on the CPU).
fn streamBits(stream: StreamId, index: u32) -> u32 {
  let counter = vec4<u32>(index, stream.round, stream.layer, 0u);
  let key = vec2<u32>(stream.seed, stream.worker);
  return philox4x32(counter, key).x;
}

// 2²⁴: the threshold of p = 1 (every 24-bit uniform is below it).
const BERNOULLI_ONE: u32 = 0x1000000u;

// round(p · 2²⁴) with ties rounded up, clamped to [0, 2²⁴]: exactly
// bernoulliThreshold(p) of core/rng/stream.ts for every f32 value p.
//
// Why integers and not `round(p * 16777216.0)`: WGSL's round() breaks ties to
// even where JavaScript's Math.round breaks them up, and a GPU may flush
// subnormals or treat NaN loosely. Working on the bit pattern is exact on every
// device. For a normal p = (2²³ + mantissa) · 2^(exponent − 150):
//   p · 2²⁴ = (2²³ + mantissa) / 2^s  with  s = 126 − exponent  (s ≥ 0 when p < 1),
// and rounding half up is (v + 2^(s−1)) >> s. For s > 24, p · 2²⁴ < 1/2 → 0.
fn bernoulliThreshold(p: f32) -> u32 {
  let bits = bitcast<u32>(p);
  let magnitude = bits & 0x7FFFFFFFu;
  if ((bits >> 31u) != 0u || magnitude == 0u || magnitude > 0x7F800000u) {
    return 0u; // negative, ±0 or NaN: never keep (CPU: !(p > 0))
  }
  let exponent = magnitude >> 23u;
  if (exponent >= 127u) {
    return BERNOULLI_ONE; // p ≥ 1, +∞ included: always keep
  }
  if (exponent == 0u) {
    return 0u; // subnormal: p · 2²⁴ < 2⁻¹⁰² rounds to 0
  }
  let v = (magnitude & 0x7FFFFFu) | 0x800000u; // 24-bit significand
  let s = 126u - exponent;
  if (s == 0u) {
    return v; // p in [1/2, 1): p · 2²⁴ is already the integer v
  }
  if (s > 24u) {
    return 0u;
  }
  return (v + (1u << (s - 1u))) >> s;
}

// Bernoulli(p) from 32 random bits: keep iff the top 24 bits are below the threshold.
fn bernoulliKeep(bits: u32, p: f32) -> bool {
  return (bits >> 8u) < bernoulliThreshold(p);
}
