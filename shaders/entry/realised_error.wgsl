// Realised error ‖ĝ − g‖² of one entry-wise ATOMO draw of a layer: kept
// entries contribute (gᵢ/pᵢ − gᵢ)², dropped ones gᵢ² (docs/design.md). The
// worker reports it next to the closed form; computing it here keeps the
// dense gradient on the GPU. gᵢ/pᵢ is the same f32 expression that
// compact/gather.wgsl sends. Host: client/gpu/kernels/entry.ts.
//
// One workgroup (WORKGROUP_SIZE invocations) per layer (one dispatch per layer), chunked
// strided sums (entry/chunked_sum.wgsl) and one in-order fold, as in entry/waterfill.wgsl.

struct Params {
  offset: u32, // first entry of the layer in `gradient`
  n: u32,      // entries of the layer
  slot: u32,   // the layer's statistics: stats[slot·STATS …]
  _pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> gradient: array<f32>;
@group(0) @binding(2) var<storage, read> probabilities: array<f32>; // n × f32
@group(0) @binding(3) var<storage, read> keepMask: array<u32>;      // ⌈n/32⌉ × u32 (bernoulli.wgsl)
@group(0) @binding(4) var<storage, read_write> stats: array<f32>;

// Invocations per workgroup: 256 on a GPU; the host sets 64 on SwiftShader,
// where a barrier switches every 4-invocation group (4× cheaper at 64).
override WORKGROUP_SIZE: u32 = 256u;

var<workgroup> partials: array<f32, WORKGROUP_SIZE>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) local: u32) {
  var sum = chunkedSum();
  for (var i = local; i < params.n; i += WORKGROUP_SIZE) {
    let g = gradient[params.offset + i];
    var error = g * g;
    if (((keepMask[i / 32u] >> (i % 32u)) & 1u) != 0u) {
      let d = g / probabilities[i] - g;
      error = d * d;
    }
    addTerm(&sum, error);
  }
  partials[local] = totalOf(sum);
  workgroupBarrier();
  if (local == 0u) {
    var total = 0.0;
    for (var i = 0u; i < WORKGROUP_SIZE; i++) {
      total += partials[i];
    }
    stats[params.slot * STATS + REALISED] = total;
  }
}
