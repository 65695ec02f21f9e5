// The exact power-of-two scaling of the batched SVD and the thin QR
// (svd/prepare.wgsl, factored/qr.wgsl scale a matrix by 2^−e so that its
// largest |entry| lies in [1, 2); svd/sort.wgsl undoes it on σ; the host
// reads e as MatrixState.scaleExp). A power of two changes no mantissa bit.

// e, the unbiased exponent of maxAbs read from its bits (exact, unlike
// log2). Zero (or subnormal, which SwiftShader flushes) gives 0, so the
// scale stays 1; clamped at 126 so that 2^−e is a normal float.
fn scaleExponent(maxAbs: f32) -> i32 {
  let biased = i32((bitcast<u32>(maxAbs) >> 23u) & 0xffu);
  return select(0, min(biased - 127, 126), biased != 0);
}

// 2^e as an f32, built from its bits, for a normal result (−126 ≤ e ≤ 127).
fn powerOfTwo(e: i32) -> f32 {
  return bitcast<f32>(u32(127 + e) << 23u);
}
