// dy ← dy where y > 0, else 0: the ReLU's backward pass, in place on the
// incoming gradient, gated by the ReLU's own output (as
// core/model/cpu/relu.ts reluBackward; y > 0 exactly where x > 0).

struct Params {
  count: u32, // elements of y and dy
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> y: array<f32>;
@group(0) @binding(2) var<storage, read_write> dy: array<f32>;

// Element i (the count, workgroup size and main are common/elements.wgsl and common/grid.wgsl).
fn item(i: u32) {
  if (!(y[i] > 0.0)) {
    dy[i] = 0.0;
  }
}
