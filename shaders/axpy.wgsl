// y ← a·x + y, elementwise over n floats.
// The simplest kernel there is; it proves the WGSL-in-Node harness and serves
// the SGD update (w ← w − η·g is axpy with a = −η).

struct Params {
  n: u32,     // number of elements
  a: f32,     // scale applied to x
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  // 2-D dispatch so n can exceed 65535 workgroups of 256.
  let i = gid.x + gid.y * groups.x * 256u;
  if (i < params.n) {
    y[i] = params.a * x[i] + y[i];
  }
}
