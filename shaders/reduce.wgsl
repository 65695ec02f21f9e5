// Segmented reduction: out[chunk.out] = ⊕ f(x[i]) over i in [chunk.first, chunk.end),
// for every chunk in a list the host builds from the segment offsets.
// CPU reference: core/linalg/reduce.ts. Host: client/gpu/kernels/reduce.ts.
//
// (⊕, f) per op, set by override constants:
//   sum            (+, x)      sumOfSquares (+, x²)
//   sumOfAbs       (+, |x|)    maxAbs       (max, |x|)
// Every op's identity is 0, which is also what an empty chunk yields.
//
// Two entry points, both over the same bindings:
//  - reduce_wide: one 256-invocation workgroup per chunk of up to WIDE_CHUNK
//    (4096) elements. Each invocation folds a strided run (consecutive invocations
//    read consecutive elements), then the workgroup halves its 256 partial
//    values in workgroup memory 8 times. For long segments.
//  - reduce_narrow: one invocation per chunk of up to NARROW_CHUNK (32) elements, folded in
//    order. No barriers, so thousands of short segments (matrix rows) cost a
//    few workgroups instead of one each; and on SwiftShader, where a barrier
//    costs a switch of every 4-invocation group, it is the only program used.
// When a segment needs several chunks, the host runs the shader again over
// the chunk results (f = identity) until each segment is a single value.
// Subgroup operations would shorten the wide tree, but the device is not
// opened with the `subgroups` feature; the tree is the portable path.

struct Params {
  chunk_count: u32,  // number of chunks in the list
  input_offset: u32, // element offset added to every chunk bound
  _pad0: u32,
  _pad1: u32,
}                    // 4 × 4 bytes

struct Chunk {
  first: u32, // first element, relative to input_offset
  end: u32,   // one past the last element
  out: u32,   // index of the result in `out`
}             // 3 × 4 bytes

override WORKGROUP_SIZE: u32 = 256u;
// Chunk lengths the host cuts segments into (client/gpu/kernels/reduce.ts
// reads them here): reduce_wide folds up to 16 elements per invocation, and
// reduce_narrow 32 in order, so its f32 error stays ≤ 32·2⁻²⁴ of the magnitudes.
const WIDE_CHUNK: u32 = 4096u;
const NARROW_CHUNK: u32 = 32u;

override COMBINE_MAX: bool = false; // ⊕ is max, else +
override TRANSFORM: u32 = 0u;       // f: 0 identity, 1 square, 2 absolute value

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> chunks: array<Chunk>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

var<workgroup> partial: array<f32, WORKGROUP_SIZE>;

fn combine(p: f32, q: f32) -> f32 {
  if (COMBINE_MAX) { return max(p, q); }
  return p + q;
}

fn transform(v: f32) -> f32 {
  switch (TRANSFORM) {
    case 1u: { return v * v; }
    case 2u: { return abs(v); }
    default: { return v; }
  }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn reduce_wide(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
               @builtin(local_invocation_index) local: u32) {
  // 2-D dispatch so there may be more than 65535 chunks.
  let index = group.x + group.y * groups.x;
  if (index >= params.chunk_count) { return; }
  let chunk = chunks[index];
  var acc = 0.0;
  for (var i = params.input_offset + chunk.first + local; i < params.input_offset + chunk.end; i += WORKGROUP_SIZE) {
    acc = combine(acc, transform(x[i]));
  }
  partial[local] = acc;
  workgroupBarrier();
  for (var half = WORKGROUP_SIZE / 2u; half > 0u; half /= 2u) {
    if (local < half) { partial[local] = combine(partial[local], partial[local + half]); }
    workgroupBarrier();
  }
  if (local == 0u) { out[chunk.out] = partial[0]; }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn reduce_narrow(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let index = gid.x + gid.y * groups.x * WORKGROUP_SIZE;
  if (index >= params.chunk_count) { return; }
  let chunk = chunks[index];
  var acc = 0.0;
  for (var i = params.input_offset + chunk.first; i < params.input_offset + chunk.end; i++) {
    acc = combine(acc, transform(x[i]));
  }
  out[chunk.out] = acc;
}
