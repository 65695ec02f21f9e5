// Backward of 2×2 max-pooling: dx = dy at each window's recorded winner, 0
// elsewhere. One invocation per input element, so every element is written
// exactly once (no zero fill, no scatter).

// params: common/structs.wgsl's PoolParams (count: planes · height · width, elements of dx).
@group(0) @binding(0) var<uniform> params: PoolParams;
@group(0) @binding(1) var<storage, read> winners: array<u32>;
@group(0) @binding(2) var<storage, read> dy: array<f32>;
@group(0) @binding(3) var<storage, read_write> dx: array<f32>;

// Element i (the count, workgroup size and main are common/elements.wgsl and common/grid.wgsl).
fn item(i: u32) {
  let ix = i % params.width;
  let iy = (i / params.width) % params.height;
  let plane = i / (params.width * params.height);
  let out_width = params.width / 2u;
  let out = (plane * (params.height / 2u) + iy / 2u) * out_width + ix / 2u;
  // Position inside the window: row bit 1, column bit 0 (as the forward pass numbers them).
  let position = ((iy & 1u) << 1u) | (ix & 1u);
  dx[i] = select(0.0, dy[out], winners[out] == position);
}
