// Stream compaction, pass 2 of 3: exclusive prefix sum of the block counts,
// the total number of kept atoms, and the dispatch size of the gather.
//
// One workgroup of 256. Invocation t owns a contiguous run of ⌈blocks/256⌉
// counts: it sums them, a workgroup scan (8 Hillis–Steele steps) turns the 256
// sums into starting offsets, and it writes its run's offsets serially. So the
// barrier count is fixed whatever n is (10⁶ atoms: 3907 blocks, 16 per
// invocation), and the result depends on the counts only: deterministic.
//
// Byte layout of `summary` (16 bytes, also the indirect-dispatch buffer):
//   word 0: count, the number of kept atoms
//   words 1..3: workgroups (x, y, z) of gather.wgsl for `count` items,
//               2-D when more than MAX_GROUPS_PER_DIMENSION groups are needed

struct Params {
  blocks: u32, // number of 256-atom blocks
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> blockCounts: array<u32>; // blocks × u32
@group(0) @binding(2) var<storage, read_write> blockOffsets: array<u32>; // blocks × u32
@group(0) @binding(3) var<storage, read_write> summary: array<u32, 4>;

override WORKGROUP_SIZE: u32 = 256u;
// Set by the host (client/gpu/kernels/compact.ts): the gather's workgroup
// size and the device's limit on workgroups per dimension.
override GATHER_WORKGROUP_SIZE: u32 = 256u;
override MAX_GROUPS_PER_DIMENSION: u32 = 65535u;

var<workgroup> scan: array<u32, WORKGROUP_SIZE>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) local: u32) {
  let run = (params.blocks + WORKGROUP_SIZE - 1u) / WORKGROUP_SIZE;
  let begin = min(local * run, params.blocks);
  let end = min(begin + run, params.blocks);
  var own = 0u;
  for (var b = begin; b < end; b++) {
    own += blockCounts[b];
  }
  scan[local] = own;
  // Inclusive scan; each step reads, waits, then writes.
  for (var offset = 1u; offset < WORKGROUP_SIZE; offset <<= 1u) {
    workgroupBarrier();
    var add = 0u;
    if (local >= offset) {
      add = scan[local - offset];
    }
    workgroupBarrier();
    scan[local] += add;
  }
  workgroupBarrier();
  var offset = scan[local] - own;
  for (var b = begin; b < end; b++) {
    blockOffsets[b] = offset;
    offset += blockCounts[b];
  }
  if (local == WORKGROUP_SIZE - 1u) {
    let count = scan[local];
    let groups = (count + GATHER_WORKGROUP_SIZE - 1u) / GATHER_WORKGROUP_SIZE;
    let x = min(groups, MAX_GROUPS_PER_DIMENSION);
    summary[0] = count;
    summary[1] = x;
    summary[2] = select(1u, (groups + x - 1u) / x, x > 0u);
    summary[3] = 1u;
  }
}
