// 2×2 max-pooling, stride 2, one invocation per output element; records which
// element of the window won (0 top-left, 1 top-right, 2 bottom-left,
// 3 bottom-right; the first maximum on ties, as core/model/cpu/maxpool2d.ts)
// so the backward pass (layers/maxpool_backward.wgsl) routes without comparing.
// Planes are independent, so the (C, B) or (B, C) order of planes does not matter.

// params: common/structs.wgsl's PoolParams (count: planes · (height/2) · (width/2), elements of y).
@group(0) @binding(0) var<uniform> params: PoolParams;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<storage, read_write> winners: array<u32>;

// Element i (the count, workgroup size and main are common/elements.wgsl and common/grid.wgsl).
fn item(i: u32) {
  let out_width = params.width / 2u;
  let out_height = params.height / 2u;
  let ox = i % out_width;
  let oy = (i / out_width) % out_height;
  let plane = i / (out_width * out_height);
  let top = (plane * params.height + 2u * oy) * params.width + 2u * ox;
  let bottom = top + params.width;
  var best = x[top];
  var winner = 0u;
  // Strictly greater: the first maximum in reading order wins ties.
  if (x[top + 1u] > best) { best = x[top + 1u]; winner = 1u; }
  if (x[bottom] > best) { best = x[bottom]; winner = 2u; }
  if (x[bottom + 1u] > best) { best = x[bottom + 1u]; winner = 3u; }
  y[i] = best;
  winners[i] = winner;
}
