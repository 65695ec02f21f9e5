// Philox4x32-10 (Salmon et al., SC 2011): the counter-based generator of the
// project, bit for bit the same function as core/rng/philox.ts.
//
// A shared fragment, not a kernel: WGSL has no #include, so a host prepends
// this text to the kernels that draw random numbers (client/gpu/kernels/common.ts).
// Every name here starts with `philox` so it cannot clash with the kernel's own.

const PHILOX_M0: u32 = 0xD2511F53u; // multiplier of words 0, 1
const PHILOX_M1: u32 = 0xCD9E8D57u; // multiplier of words 2, 3
const PHILOX_W0: u32 = 0x9E3779B9u; // key bump of word 0 (golden ratio)
const PHILOX_W1: u32 = 0xBB67AE85u; // key bump of word 1 (sqrt(3) - 1)

// The full 64-bit product a·b as (high word, low word). WGSL has no u64, so
// the product is assembled from four 16×16-bit partial products, each below
// 2³²; the two carries are recovered from wrap-around (a sum that wrapped is
// smaller than an addend). The low word comes out of the same work, which
// saves the separate 32-bit multiply a·b (a fifth of the multiplies).
// core/rng/philox.ts computes the same function as mulhi32 and Math.imul.
fn philoxMulWide(a: u32, b: u32) -> vec2<u32> {
  let al = a & 0xFFFFu;
  let ah = a >> 16u;
  let bl = b & 0xFFFFu;
  let bh = b >> 16u;
  let lolo = al * bl;
  let hilo = ah * bl;
  let mid = hilo + al * bh; // may wrap: then 2³² · 2¹⁶ is carried into the high word
  let midCarry = select(0u, 0x10000u, mid < hilo);
  let lo = lolo + (mid << 16u);
  let loCarry = select(0u, 1u, lo < lolo);
  return vec2<u32>(ah * bh + (mid >> 16u) + midCarry + loCarry, lo);
}

// The 10-round Philox4x32 bijection: 128-bit counter (4 words) and 64-bit key
// (2 words) to 128 random bits (4 words).
fn philox4x32(counter: vec4<u32>, key: vec2<u32>) -> vec4<u32> {
  var c = counter;
  var k = key;
  for (var round = 0u; round < 10u; round++) {
    if (round > 0u) {
      k = k + vec2<u32>(PHILOX_W0, PHILOX_W1);
    }
    let p0 = philoxMulWide(PHILOX_M0, c.x); // (hi, lo)
    let p1 = philoxMulWide(PHILOX_M1, c.z);
    c = vec4<u32>(p1.x ^ c.y ^ k.x, p1.y, p0.x ^ c.w ^ k.y, p0.y);
  }
  return c;
}
