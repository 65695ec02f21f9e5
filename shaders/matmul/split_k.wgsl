// Second pass of split-K matmul: C ← α·Σ_s P_s + β·C, where P_s is the
// partial product over K slice s written by matmul/tiled.wgsl (params.splits > 1).
// Host: client/gpu/kernels/matmul.ts.
//
// Workspace layout (f32): partial[(s · batch + item) · count + e] for slice s,
// batch item `item` and element e < count = m·n of the row-major m×n product.

struct Params {
  count: u32,    // m·n: elements per product
  batch: u32,    // number of products
  splits: u32,   // K slices to add up
  offset_c: u32, // element offset of C's item 0
  stride_c: u32, // elements between C's batch items
  alpha: f32,
  beta: f32,     // 0: C is written without being read
  _pad: u32,
}                // 8 × 4 bytes

override WORKGROUP_SIZE: u32 = 256u;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> partial: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;

fn itemCount() -> u32 {
  return params.count * params.batch;
}

// Element `index` of the batch of products (the frame, main, is common/grid.wgsl).
fn item(index: u32) {
  let product = index / params.count;
  let e = index % params.count;
  let slice_stride = params.batch * params.count;
  var sum = 0.0;
  for (var s = 0u; s < params.splits; s++) { sum += partial[s * slice_stride + index]; }
  let at = params.offset_c + product * params.stride_c + e;
  var v = params.alpha * sum;
  if (params.beta != 0.0) { v = fma(params.beta, c[at], v); }
  c[at] = v;
}
