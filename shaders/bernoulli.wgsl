// Keep mask of independent Bernoulli(pᵢ) draws, one per atom: the sampling
// step tᵢ ~ Bernoulli(pᵢ) of ATOMO (docs/design.md).
// Needs common/philox.wgsl and common/random_stream.wgsl before it.
//
// One invocation per mask word: it draws its 32 atoms in turn and writes the
// word once. No workgroup memory, atomics or barriers: SwiftShader runs a
// barrier as a switch of every invocation's coroutine (taking the barriers out
// of the compaction passes made them about 100× faster there), and a real GPU
// still has n/32 invocations, plenty for a layer of 10⁵ atoms.
// Byte layout of `keepMask`: u32 word w holds atoms 32w … 32w + 31, atom
// 32w + b in bit b (least significant first); bits at and past n are 0.

struct Params {
  stream: StreamId, // 4 × u32: seed, worker, round, layer
  n: u32,           // number of atoms
  // 3 × u32 padding: the host writes 32 bytes
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> probabilities: array<f32>; // n × f32, pᵢ
@group(0) @binding(2) var<storage, read_write> keepMask: array<u32>; // ⌈n/32⌉ × u32

override WORKGROUP_SIZE: u32 = 64u;

// One item per mask word (the frame, main, is common/grid.wgsl).
fn itemCount() -> u32 {
  return (params.n + 31u) / 32u;
}

fn item(w: u32) {
  let first = w * 32u;
  let atoms = min(32u, params.n - first);
  var word = 0u;
  for (var b = 0u; b < atoms; b++) {
    if (bernoulliKeep(streamBits(params.stream, first + b), probabilities[first + b])) {
      word |= 1u << b;
    }
  }
  keepMask[w] = word;
}
