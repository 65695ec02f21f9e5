// dst[j] = src row indices[j], for the j < count kept atoms of a compaction:
// gathers the singular vectors of the sampled spectral atoms into one packed
// block, so only those rows are read back (docs/design.md: send uᵢ, vᵢ of the
// kept atoms). Rows are atom-major (row t at src_offset + t·row_length), the
// layout of client/gpu/kernels/svd.ts's outputs. `summary` word 0 is the kept count
// (compact/offsets.wgsl); invocations past it do nothing.

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

override WORKGROUP_SIZE: u32 = 256u;

// One item per float of the kept rows (the frame, main, is common/grid.wgsl).
fn itemCount() -> u32 {
  return min(summary[0], params.capacity) * params.row_length;
}

fn item(i: u32) {
  let j = i / params.row_length;
  let e = i % params.row_length;
  dst[i] = src[params.src_offset + indices[j] * params.row_length + e];
}
