// y ← a·x + y, elementwise over `count` floats.
// The simplest kernel there is; it proves the WGSL-in-Node harness and serves
// the SGD update (w ← w − η·g is axpy with a = −η).

struct Params {
  count: u32, // number of elements
  a: f32,     // scale applied to x
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

// Element i (the count, workgroup size and main are common/elements.wgsl and common/grid.wgsl).
fn item(i: u32) {
  y[i] = params.a * x[i] + y[i];
}
