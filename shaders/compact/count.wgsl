// Stream compaction, pass 1 of 3: the number of set bits in each block of a
// bit mask (block = 8 words = 256 atoms; see compact/mask.wgsl, which the host
// appends). The counts feed compact/offsets.wgsl.

struct Params {
  n: u32, // number of atoms (bits) in the mask
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> mask: array<u32>; // ⌈n/32⌉ × u32
@group(0) @binding(2) var<storage, read_write> blockCounts: array<u32>; // ⌈n/256⌉ × u32

// One item per block (the frame, main, is common/grid.wgsl; itemCount, compact/mask.wgsl).
fn item(block: u32) {
  var count = 0u;
  for (var k = 0u; k < BLOCK_WORDS; k++) {
    count += countOneBits(maskWord(block * BLOCK_WORDS + k));
  }
  blockCounts[block] = count;
}
