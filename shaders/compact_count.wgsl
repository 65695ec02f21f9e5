// Stream compaction, pass 1 of 3: the number of set bits in each block of a
// bit mask (block = 8 words = 256 atoms; see compact_mask.wgsl, which the host
// appends). The counts feed compact_offsets.wgsl.

struct Params {
  n: u32, // number of atoms (bits) in the mask
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> mask: array<u32>; // ⌈n/32⌉ × u32
@group(0) @binding(2) var<storage, read_write> blockCounts: array<u32>; // ⌈n/256⌉ × u32

const GROUP_SIZE: u32 = 64u;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let block = id.x + id.y * groups.x * GROUP_SIZE;
  if (block >= (params.n + BLOCK_ATOMS - 1u) / BLOCK_ATOMS) {
    return;
  }
  var count = 0u;
  for (var k = 0u; k < BLOCK_WORDS; k++) {
    count += countOneBits(maskWord(block * BLOCK_WORDS + k));
  }
  blockCounts[block] = count;
}
