// im2col for a 'valid' stride-1 convolution over a whole batch, so the
// convolution of every example is one matrix product:
//   y (out × B·P) = K (out × taps) · col (taps × B·P)
// with taps r = (c·k + ky)·k + kx and columns n·P + q, q = oy·ow + ox:
//   col[r, n·P + q] = x[c, n, oy + ky, ox + kx]
// The input is channel-major across the batch (C, B, H, W), the layout the
// GPU backend keeps feature maps in; the product then lands in (out, B, oh, ow).
// CPU reference (one example at a time): core/model/cpu/im2col.ts.

// params: common/structs.wgsl's ConvParams (count: taps · B · P, elements of col).
@group(0) @binding(0) var<uniform> params: ConvParams;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> col: array<f32>;

// Element i (the count, workgroup size and main are common/elements.wgsl and common/grid.wgsl).
fn item(i: u32) {
  let pixels = params.out_height * params.out_width;
  let columns = params.batch * pixels;
  let r = i / columns;
  let column = i % columns;
  let n = column / pixels;
  let q = column % pixels;
  let k = params.kernel;
  let c = r / (k * k);
  let ky = (r / k) % k;
  let kx = r % k;
  let iy = q / params.out_width + ky;
  let ix = q % params.out_width + kx;
  col[i] = x[((c * params.batch + n) * params.height + iy) * params.width + ix];
}
