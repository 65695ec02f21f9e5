// The values sent for the kept atoms of entry-wise ATOMO: λᵢ / pᵢ at each
// compacted index, so only (index, value) pairs are read back
// (ĝ = Σ (λᵢ tᵢ / pᵢ) aᵢ, docs/design.md).
//
// Dispatched indirectly with the workgroup count that compact/offsets.wgsl
// wrote into `summary`, so the host never has to read the count first.
// Layout of `summary`: see compact/offsets.wgsl (word 0 is the count).
// Precision: WGSL's f32 division is within 2.5 ulp, not correctly rounded.

@group(0) @binding(0) var<storage, read> summary: array<u32, 4>;
@group(0) @binding(1) var<storage, read> indices: array<u32>; // count × u32
@group(0) @binding(2) var<storage, read> coefficients: array<f32>; // n × f32, λᵢ
@group(0) @binding(3) var<storage, read> probabilities: array<f32>; // n × f32, pᵢ
@group(0) @binding(4) var<storage, read_write> values: array<f32>; // count × f32, λᵢ / pᵢ

override WORKGROUP_SIZE: u32 = 256u;

fn itemCount() -> u32 {
  return summary[0];
}

// Kept atom j (the frame, main, is common/grid.wgsl).
fn item(j: u32) {
  let i = indices[j];
  // A kept atom has pᵢ > 0 (threshold 0 never keeps), so this never divides by 0.
  values[j] = coefficients[i] / probabilities[i];
}
