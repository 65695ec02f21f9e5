// Copies each matrix of a batch into the layout the Jacobi SVD works on:
// tall (m ≥ n, transposed when the input is wide), column-major, and scaled
// by a power of two so that max |w| ∈ [1, 2).
//
// Why the scaling: one-sided Jacobi forms squared column norms. A gradient
// entry of 1e-30 squares to 1e-60 (below f32's 1.2e-38) and one of 1e30 to
// 1e60 (above 3.4e38). A power of two changes no mantissa bit, so the scaling
// is exact and undone exactly on σ at the end (svd/sort.wgsl).
//
// One workgroup per matrix (workgroup_id.x = job index). Also resets the
// matrix's state record that the later passes read and update.

struct Job {
  inOff: u32,   // first float of the row-major rows×cols input in `source`
  rows: u32,
  cols: u32,
  outOff: u32,  // first float of the column-major m×n copy in `work`
  state: u32,   // index into `states`
}

@group(0) @binding(0) var<storage, read> jobs: array<Job>;
@group(0) @binding(1) var<storage, read> source: array<f32>;
@group(0) @binding(2) var<storage, read_write> work: array<f32>;
@group(0) @binding(3) var<storage, read_write> states: array<MatrixState>;

override WORKGROUP_SIZE: u32 = 256u;
var<workgroup> partialMax: array<f32, WORKGROUP_SIZE>;

// One workgroup per job (the frame, main, is common/jobs.wgsl).
fn runJob(job: Job, tid: u32) {
  let count = job.rows * job.cols;

  var localMax = 0.0;
  for (var k = tid; k < count; k += WORKGROUP_SIZE) {
    localMax = max(localMax, abs(source[job.inOff + k]));
  }
  partialMax[tid] = localMax;
  workgroupBarrier();
  for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride /= 2u) {
    if (tid < stride) {
      partialMax[tid] = max(partialMax[tid], partialMax[tid + stride]);
    }
    workgroupBarrier();
  }
  let maxAbs = partialMax[0];

  let e = scaleExponent(maxAbs);
  let scale = powerOfTwo(-e);

  let m = max(job.rows, job.cols);
  let transposed = job.rows < job.cols;
  for (var k = tid; k < count; k += WORKGROUP_SIZE) {
    var value: f32;
    if (transposed) {
      // Column j of Aᵀ is row j of A: the row-major input already is Aᵀ column-major.
      value = source[job.inOff + k];
    } else {
      let i = k % m; // row of A
      let j = k / m; // column of A
      value = source[job.inOff + i * job.cols + j];
    }
    work[job.outOff + k] = value * scale;
  }

  if (tid == 0u) {
    states[job.state] = MatrixState(e, 0u, 0u, 0u, 0.0, 0u, 0u, 0u);
  }
}
