// Stream compaction, pass 3 of 3: the indices of the set bits of a mask, in
// increasing order, packed at the front of `indices`.
//
// One invocation per block (8 words = 256 atoms; compact/mask.wgsl, which the
// host appends): it starts at the block's offset from compact/offsets.wgsl and
// writes its atoms lowest bit first. Positions follow from counts alone, so
// the output is sorted and the same every run.

struct Params {
  n: u32, // number of atoms (bits) in the mask
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> mask: array<u32>; // ⌈n/32⌉ × u32
@group(0) @binding(2) var<storage, read> blockOffsets: array<u32>; // ⌈n/256⌉ × u32
@group(0) @binding(3) var<storage, read_write> indices: array<u32>; // count × u32 (capacity n)

// One item per block (the frame, main, is common/grid.wgsl; itemCount, compact/mask.wgsl).
fn item(block: u32) {
  var slot = blockOffsets[block];
  for (var k = 0u; k < BLOCK_WORDS; k++) {
    let w = block * BLOCK_WORDS + k;
    var rest = maskWord(w);
    while (rest != 0u) {
      indices[slot] = w * 32u + firstTrailingBit(rest);
      slot += 1u;
      rest &= rest - 1u; // clear the lowest set bit
    }
  }
}
