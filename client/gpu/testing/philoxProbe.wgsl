// Test-only probes of the shared WGSL fragments (common/philox.wgsl,
// random_stream.wgsl): they expose the functions themselves, so tests can
// compare them with core/rng value by value. Not used by any kernel.

@group(0) @binding(0) var<storage, read> words: array<u32>;  // philox: 6 × u32 per item; mulWide: 2
@group(0) @binding(1) var<storage, read> floats: array<f32>; // threshold: 1 × f32 per item
@group(0) @binding(2) var<storage, read_write> out: array<u32>;

override WORKGROUP_SIZE: u32 = 64u;

// Item i reads counter (c0, c1, c2, c3) = words[6i .. 6i+3] and key (k0, k1) =
// words[6i+4 .. 6i+5], and writes the four Philox output words to out[4i .. 4i+3];
// 2-D dispatch.
@compute @workgroup_size(WORKGROUP_SIZE)
fn philox(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let i = id.x + id.y * groups.x * WORKGROUP_SIZE;
  if (i >= arrayLength(&words) / 6u) {
    return;
  }
  let b = 6u * i;
  let r = philox4x32(vec4<u32>(words[b], words[b + 1u], words[b + 2u], words[b + 3u]), vec2<u32>(words[b + 4u], words[b + 5u]));
  out[4u * i] = r.x;
  out[4u * i + 1u] = r.y;
  out[4u * i + 2u] = r.z;
  out[4u * i + 3u] = r.w;
}

// out[i] = bernoulliThreshold(floats[i]); 2-D dispatch.
@compute @workgroup_size(WORKGROUP_SIZE)
fn threshold(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let i = id.x + id.y * groups.x * WORKGROUP_SIZE;
  if (i < arrayLength(&floats)) {
    out[i] = bernoulliThreshold(floats[i]);
  }
}

// Item i reads (a, b) = words[2i], words[2i+1] and writes the 64-bit product
// a·b as (high, low) to out[2i], out[2i+1]; 2-D dispatch.
@compute @workgroup_size(WORKGROUP_SIZE)
fn mulWide(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let i = id.x + id.y * groups.x * WORKGROUP_SIZE;
  if (i >= arrayLength(&words) / 2u) {
    return;
  }
  let product = philoxMulWide(words[2u * i], words[2u * i + 1u]);
  out[2u * i] = product.x;
  out[2u * i + 1u] = product.y;
}
