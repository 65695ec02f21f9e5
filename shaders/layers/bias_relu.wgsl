// x ← x + b[channel] (and then max(x, 0) when RELU): the bias and activation
// of a dense or convolution layer, in place on the product the matmul wrote.
// Host: client/gpu/kernels/layers.ts. CPU reference:
// core/model/cpu/dense.ts, conv2d.ts and relu.ts.
//
// Element i belongs to channel (i / inner) % channels, which covers both
// layouts the GPU backend uses:
//   dense, batch × outputs:          inner = 1,      channels = outputs
//   conv, channel × (batch · pixels): inner = batch·pixels, channels = out channels

struct Params {
  count: u32,       // elements of x
  channels: u32,    // bias entries
  inner: u32,       // consecutive elements sharing one bias entry
  bias_offset: u32, // f32 index of b[0] in the parameter buffer
}

override RELU: bool = true;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> parameters: array<f32>;
@group(0) @binding(2) var<storage, read_write> x: array<f32>;

// Element i (the count, workgroup size and main are common/elements.wgsl and common/grid.wgsl).
fn item(i: u32) {
  let channel = (i / params.inner) % params.channels;
  let value = x[i] + parameters[params.bias_offset + channel];
  if (RELU) {
    x[i] = max(value, 0.0);
  } else {
    x[i] = value;
  }
}
