// Mean softmax cross-entropy, one invocation per example n:
//   loss[n] = lse(z_n) − z_n[y_n]          (the host sums and divides by B)
//   dz_n    = (softmax(z_n) − onehot(y_n)) / B
// CPU reference: core/model/cpu/softmax-cross-entropy.ts. The row maximum is
// subtracted before exp so nothing overflows; f32 throughout (classes ≤ 10s).

struct Params {
  batch: u32,       // B
  classes: u32,     // logits per example
  loss_offset: u32, // f32 index of loss[0] in `losses`
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;      // B × classes
@group(0) @binding(2) var<storage, read> labels: array<u32>;      // B, each < classes (checked by the host)
@group(0) @binding(3) var<storage, read_write> d_logits: array<f32>; // B × classes
@group(0) @binding(4) var<storage, read_write> losses: array<f32>;   // loss_offset + B

override WORKGROUP_SIZE: u32 = 64u;

fn itemCount() -> u32 {
  return params.batch;
}

// Example n (the frame, main, is common/grid.wgsl).
fn item(n: u32) {
  let row = n * params.classes;
  var zmax = logits[row];
  for (var k = 1u; k < params.classes; k++) {
    zmax = max(zmax, logits[row + k]);
  }
  var sum = 0.0;
  for (var k = 0u; k < params.classes; k++) {
    sum += exp(logits[row + k] - zmax);
  }
  let lse = zmax + log(sum);
  let label = labels[n];
  let scale = 1.0 / f32(params.batch);
  for (var k = 0u; k < params.classes; k++) {
    let probability = exp(logits[row + k] - lse);
    d_logits[row + k] = (probability - select(0.0, 1.0, k == label)) * scale;
  }
  losses[params.loss_offset + n] = lse - logits[row + label];
}
