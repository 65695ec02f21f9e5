// Second pass of split-K matmul: C ← α·Σ_s P_s + β·C, where P_s is the
// partial product over K slice s written by matmul.wgsl (params.splits > 1).
// Host: client/gpu/matmul.ts.
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

const WORKGROUP: u32 = 256u;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> partial: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  // 2-D dispatch so batch · count may exceed 65535 workgroups.
  let index = gid.x + gid.y * groups.x * WORKGROUP;
  if (index >= params.count * params.batch) { return; }
  let item = index / params.count;
  let e = index % params.count;
  let slice_stride = params.batch * params.count;
  var sum = 0.0;
  for (var s = 0u; s < params.splits; s++) { sum += partial[s * slice_stride + index]; }
  let at = params.offset_c + item * params.stride_c + e;
  var v = params.alpha * sum;
  if (params.beta != 0.0) { v = fma(params.beta, c[at], v); }
  c[at] = v;
}
