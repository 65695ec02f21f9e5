// out[b, a, p] = in[a, b, p] for an (A, B, P) array: moves feature maps
// between the channel-major-across-batch layout the convolutions use
// (C, B, H·W) and the example-major layout dense layers use (B, C·H·W), and
// back for the gradient (the same kernel with A and B swapped).

struct Params {
  outer: u32,  // A
  middle: u32, // B
  inner: u32,  // P
  count: u32,  // A · B · P
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

// Element i (the count, workgroup size and main are common/elements.wgsl and common/grid.wgsl).
fn item(i: u32) {
  // i indexes the output (B, A, P).
  let p = i % params.inner;
  let a = (i / params.inner) % params.outer;
  let b = i / (params.inner * params.outer);
  y[i] = x[(a * params.middle + b) * params.inner + p];
}
