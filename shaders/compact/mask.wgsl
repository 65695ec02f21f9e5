// Shared fragment of compact/count.wgsl and compact/scatter.wgsl: reading a
// bit mask by blocks. Needs, declared by the kernel before it:
//   var<uniform> params with a field `n` (number of atoms, i.e. bits)
//   var<storage, read> mask: array<u32>
// Mask layout (as bernoulli.wgsl writes it): word w holds atoms 32w … 32w + 31,
// atom 32w + b in bit b.

// A block is 8 mask words = 256 atoms: the unit of compaction, handled by one
// invocation from end to end, so no pass needs a workgroup barrier.
const BLOCK_WORDS: u32 = 8u;
const BLOCK_ATOMS: u32 = 256u;

// One invocation per block (common/grid.wgsl is the frame; the kernel defines item(block)).
override WORKGROUP_SIZE: u32 = 64u;

fn itemCount() -> u32 {
  return (params.n + BLOCK_ATOMS - 1u) / BLOCK_ATOMS;
}

// Mask word w with the bits at and past n cleared, 0 past the end: the
// compaction accepts any mask, not only ones whose tail is already clean.
fn maskWord(w: u32) -> u32 {
  let wordCount = (params.n + 31u) / 32u;
  if (w >= wordCount) {
    return 0u;
  }
  let tail = params.n & 31u;
  if (w == wordCount - 1u && tail != 0u) {
    return mask[w] & ((1u << tail) - 1u);
  }
  return mask[w];
}
