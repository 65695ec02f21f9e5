// Orthonormalises the columns of each len×count block (column-major) in
// place: classical Gram–Schmidt applied twice per column (CGS2), which is as
// accurate as modified Gram–Schmidt to O(ε) in orthogonality and needs only
// one barrier-separated round of dot products per repetition, so all
// projections of a column are computed in parallel.
//
// Used by the randomized range finder (top-k mode) after every product with
// W or Wᵀ, which keeps the sketch from collapsing onto the top direction.
// A column whose norm falls below DROP·(its norm before projection) lies
// numerically in the span of the previous ones (W of lower rank than the
// sketch): it is set to zero rather than normalising rounding noise.
//
// With SCALE_COLUMNS = 1 each column is first divided by its largest |x|
// (Gram–Schmidt is invariant to a column's scale), so that columns whose
// squared norm would overflow or underflow f32 (|x| beyond about 1e±19)
// are orthonormalised too; PowerSGD's P = MQ (compression/powerSgdCompressor.ts)
// needs it; the SVD runs it unscaled (0, the default).
//
// One workgroup per block; count ≤ MAX_COLUMNS.

struct Job {
  off: u32,   // first float of the block in `blocks`
  len: u32,   // rows (length of a column)
  count: u32, // columns
  pad: u32,
}

@group(0) @binding(0) var<storage, read> jobs: array<Job>;
@group(0) @binding(1) var<storage, read_write> blocks: array<f32>;

override WORKGROUP_SIZE: u32 = 256u;
override SCALE_COLUMNS: u32 = 0u;
const MAX_COLUMNS: u32 = 256u;
const DROP: f32 = 1e-5;

var<workgroup> dots: array<f32, MAX_COLUMNS>; // qᵢ·y for the previous columns i
var<workgroup> partial: array<f32, WORKGROUP_SIZE>;

// Σ x² (useMax false) or max |x| (true) over the column at base, by the whole
// workgroup; every invocation gets the result.
fn columnReduce(base: u32, len: u32, tid: u32, useMax: bool) -> f32 {
  var acc = 0.0;
  for (var r = tid; r < len; r += WORKGROUP_SIZE) {
    let x = blocks[base + r];
    acc = select(acc + x * x, max(acc, abs(x)), useMax);
  }
  partial[tid] = acc;
  workgroupBarrier();
  for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride /= 2u) {
    if (tid < stride) {
      let a = partial[tid];
      let b = partial[tid + stride];
      partial[tid] = select(a + b, max(a, b), useMax);
    }
    workgroupBarrier();
  }
  let total = partial[0];
  workgroupBarrier();
  return total;
}

// One workgroup per job (the frame, main, is common/jobs.wgsl).
fn runJob(job: Job, tid: u32) {
  let len = job.len;
  for (var j = 0u; j < job.count; j++) {
    let yBase = job.off + j * len;
    if (SCALE_COLUMNS != 0u) {
      let largest = columnReduce(yBase, len, tid, true);
      if (largest > 0.0) {
        for (var r = tid; r < len; r += WORKGROUP_SIZE) {
          blocks[yBase + r] = blocks[yBase + r] / largest;
        }
      }
      storageBarrier();
      workgroupBarrier();
    }
    let before = columnReduce(yBase, len, tid, false);
    for (var round = 0u; round < 2u; round++) {
      // One invocation per previous column: its dot product with y.
      for (var i = tid; i < j; i += WORKGROUP_SIZE) {
        let qBase = job.off + i * len;
        var d = 0.0;
        for (var r = 0u; r < len; r++) {
          d += blocks[qBase + r] * blocks[yBase + r];
        }
        dots[i] = d;
      }
      storageBarrier();
      workgroupBarrier();
      // y ← y − Σᵢ (qᵢ·y) qᵢ, each invocation on its own rows.
      for (var r = tid; r < len; r += WORKGROUP_SIZE) {
        var y = blocks[yBase + r];
        for (var i = 0u; i < j; i++) {
          y -= dots[i] * blocks[job.off + i * len + r];
        }
        blocks[yBase + r] = y;
      }
      storageBarrier();
      workgroupBarrier();
    }
    let after = columnReduce(yBase, len, tid, false);
    let keep = after > DROP * DROP * before && after > 0.0;
    let scale = select(0.0, inverseSqrt(after), keep);
    for (var r = tid; r < len; r += WORKGROUP_SIZE) {
      blocks[yBase + r] *= scale;
    }
    storageBarrier();
    workgroupBarrier();
  }
}
