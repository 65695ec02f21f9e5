// dst[j] = src row indices[j], for the j < count kept atoms of a compaction:
// gathers the singular vectors of the sampled spectral atoms into one packed
// block, so only those rows are read back (docs/design.md: send uᵢ, vᵢ of the
// kept atoms). Rows are atom-major (row t at src_offset + t·row_length), the
// layout of client/gpu/svd.ts's outputs. `summary` word 0 is the kept count
// (compact_offsets.wgsl); invocations past it do nothing.

struct Params {
  row_length: u32, // floats per row
  src_offset: u32, // f32 index of row 0 in src
  capacity: u32,   // most rows (the layer's atom count)
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> summary: array<u32, 4>;
@group(0) @binding(2) var<storage, read> indices: array<u32>;
@group(0) @binding(3) var<storage, read> src: array<f32>;
@group(0) @binding(4) var<storage, read_write> dst: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let i = id.x + id.y * groups.x * 256u;
  let j = i / params.row_length;
  if (j >= summary[0] || j >= params.capacity) {
    return;
  }
  let e = i % params.row_length;
  dst[i] = src[params.src_offset + indices[j] * params.row_length + e];
}
