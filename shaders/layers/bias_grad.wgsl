// db[o] = Σ of the output gradient over every element of channel o: the bias
// gradient of a dense or convolution layer, written straight into the flat
// gradient vector. One workgroup per channel: 64 invocations take strided
// partial sums, then a tree in workgroup memory adds them (6 barriers).
//
// Element e (0 ≤ e < count) of channel o sits at
//   (e / inner) · outer_stride + o · inner + e % inner
// which covers both layouts of the GPU backend:
//   dense, batch × outputs:          inner = 1, outer_stride = outputs, count = B
//   conv, channel × (batch · pixels): inner = count = batch·pixels

struct Params {
  count: u32,        // elements per channel
  inner: u32,
  outer_stride: u32,
  out_offset: u32,   // f32 index of db[0] in `gradient`
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> dy: array<f32>;
@group(0) @binding(2) var<storage, read_write> gradient: array<f32>;

override WORKGROUP_SIZE: u32 = 64u;
var<workgroup> partial: array<f32, WORKGROUP_SIZE>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_index) t: u32) {
  let o = group.x;
  var sum = 0.0;
  for (var e = t; e < params.count; e += WORKGROUP_SIZE) {
    sum += dy[(e / params.inner) * params.outer_stride + o * params.inner + e % params.inner];
  }
  partial[t] = sum;
  workgroupBarrier();
  for (var half = WORKGROUP_SIZE / 2u; half > 0u; half /= 2u) {
    if (t < half) {
      partial[t] += partial[t + half];
    }
    workgroupBarrier();
  }
  if (t == 0u) {
    gradient[params.out_offset + o] = partial[0];
  }
}
