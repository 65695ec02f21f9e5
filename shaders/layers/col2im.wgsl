// col2im, the adjoint of layers/im2col.wgsl: the input gradient of a convolution
// from the gradient of its column matrix,
//   dx[c, n, iy, ix] = Σ over taps (ky, kx) that read it of dcol[(c·k + ky)·k + kx, n·P + (iy − ky)·ow + (ix − kx)]
// One invocation per input element gathers its ≤ k² terms, so no two
// invocations write the same place: deterministic, no atomics.
// CPU reference: core/model/cpu/im2col.ts col2im (which scatters instead).

// params: common/structs.wgsl's ConvParams (count: C · B · H · W, elements of dx).
@group(0) @binding(0) var<uniform> params: ConvParams;
@group(0) @binding(1) var<storage, read> dcol: array<f32>;
@group(0) @binding(2) var<storage, read_write> dx: array<f32>;

// Element i (the count, workgroup size and main are common/elements.wgsl and common/grid.wgsl).
fn item(i: u32) {
  let ix = i % params.width;
  let iy = (i / params.width) % params.height;
  let plane = i / (params.width * params.height); // c · B + n
  let n = plane % params.batch;
  let c = plane / params.batch;
  let k = params.kernel;
  let pixels = params.out_height * params.out_width;
  let columns = params.batch * pixels;
  var sum = 0.0;
  for (var ky = 0u; ky < k; ky++) {
    // oy = iy − ky must lie in [0, out_height); u32 wraps below 0, so compare first.
    if (ky > iy || iy - ky >= params.out_height) {
      continue;
    }
    let oy = iy - ky;
    for (var kx = 0u; kx < k; kx++) {
      if (kx > ix || ix - kx >= params.out_width) {
        continue;
      }
      let r = (c * k + ky) * k + kx;
      sum += dcol[r * columns + n * pixels + oy * params.out_width + (ix - kx)];
    }
  }
  dx[i] = sum;
}
