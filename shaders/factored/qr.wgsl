// Thin QR of the factors of dense-layer gradients, R only (docs/design.md,
// "Decompositions": G = Xᵀ·Δ, Xᵀ = Q_x R_x, Δᵀ = Q_Δ R_Δ). For each job the
// tall factor F (length m × batch n, column-major, which is the backend's
// example-major n × m factor read as it is) is
//   1. scaled by a power of two so that max |F| ∈ [1, 2): exact, and undone
//      by the host from MatrixState.scaleExp (F = F′·2^scaleExp);
//   2. reduced by k = min(m, n) Householder reflections, LAPACK's dlarfg
//      and dlarf (H = I − τ v vᵀ, v₀ = 1, β = −sign(α)‖(α, x)‖), in place;
//   3. written out as R′ (k × n, row-major, zero below the diagonal).
// Householder is backward stable whatever the factor's rank: a column that is
// already zero below the diagonal gets τ = 0 (H = I) and a zero on R's
// diagonal, never a division by zero. Q is never formed: the route lifts the
// singular vectors from the factors themselves (factored/lift.wgsl).
//
// One workgroup per job. Invocation t owns rows i ≡ t (mod WORKGROUP_SIZE)
// of F for the whole job, so no invocation reads storage another wrote and
// no storage barrier is needed; what the rows share (partial dot products,
// the pivot row) goes through workgroup memory. Per column two barriers for
// every COLUMNS trailing columns: on SwiftShader a barrier switches every
// invocation, so this is the cost that counts there.

struct Job {
  workOff: u32, // first float of F in `work` (m × n column-major), factorised in place
  length: u32,  // m
  batch: u32,   // n, the examples
  rOff: u32,    // first float of R′ (k × n row-major) in `r`
  state: u32,   // index into `states`
}

@group(0) @binding(0) var<storage, read> jobs: array<Job>;
@group(0) @binding(1) var<storage, read_write> work: array<f32>;
@group(0) @binding(2) var<storage, read_write> r: array<f32>;
@group(0) @binding(3) var<storage, read_write> states: array<MatrixState>;

override WORKGROUP_SIZE: u32 = 64u;
// Trailing columns updated per pass (workgroup memory: WORKGROUP_SIZE × COLUMNS partial dot products).
const COLUMNS: u32 = 32u;

var<workgroup> partial: array<array<f32, COLUMNS>, WORKGROUP_SIZE>; // [invocation][column of the pass]
var<workgroup> normPart: array<f32, WORKGROUP_SIZE>; // each invocation's share of ‖x‖² (x = column j below row j)
var<workgroup> pivotRow: array<f32, COLUMNS>; // row j of the pass's columns
var<workgroup> pivot: f32; // α = F[j][j]
var<workgroup> weights: array<f32, COLUMNS>; // w_c = vᵀ F[j:, c]

// One workgroup per job (the frame, main, is common/jobs.wgsl).
fn runJob(job: Job, tid: u32) {
  let m = job.length;
  let n = job.batch;
  let base = job.workOff;

  // 1. Scaling: the largest |F| from every invocation's rows, then 2^-e
  //    (common/power_of_two.wgsl).
  var localMax = 0.0;
  for (var i = tid; i < m; i += WORKGROUP_SIZE) {
    for (var c = 0u; c < n; c++) {
      localMax = max(localMax, abs(work[base + c * m + i]));
    }
  }
  normPart[tid] = localMax;
  workgroupBarrier();
  var maxAbs = 0.0;
  for (var t = 0u; t < WORKGROUP_SIZE; t++) {
    maxAbs = max(maxAbs, normPart[t]);
  }
  let e = scaleExponent(maxAbs);
  let scale = powerOfTwo(-e);
  for (var i = tid; i < m; i += WORKGROUP_SIZE) {
    for (var c = 0u; c < n; c++) {
      work[base + c * m + i] *= scale;
    }
  }
  workgroupBarrier(); // every invocation has read normPart before step 0 rewrites it

  // 2. Householder, column j = 0 … k−1.
  let k = min(m, n);
  let owner = tid; // rows this invocation owns: i ≡ owner (mod WORKGROUP_SIZE)
  for (var j = 0u; j < k; j++) {
    let xCol = base + j * m;
    // First row > j this invocation owns.
    let firstRow = j + 1u + (owner + WORKGROUP_SIZE - (j + 1u) % WORKGROUP_SIZE) % WORKGROUP_SIZE;
    let ownsPivot = j % WORKGROUP_SIZE == owner;
    // Passes over the trailing columns [j + 1, n), COLUMNS at a time; at least one,
    // which also settles the reflector (the last column has no trailing ones).
    var first = j + 1u;
    loop {
      let width = min(COLUMNS, n - first);
      var dots = array<f32, COLUMNS>();
      var own = 0.0;
      for (var i = firstRow; i < m; i += WORKGROUP_SIZE) {
        let x = work[xCol + i];
        own += x * x;
        for (var c = 0u; c < width; c++) {
          dots[c] += x * work[base + (first + c) * m + i];
        }
      }
      for (var c = 0u; c < width; c++) {
        partial[tid][c] = dots[c];
      }
      normPart[tid] = own;
      if (ownsPivot) {
        if (first == j + 1u) {
          pivot = work[xCol + j]; // read once: this step writes β there
        }
        for (var c = 0u; c < width; c++) {
          pivotRow[c] = work[base + (first + c) * m + j];
        }
      }
      workgroupBarrier();

      // The reflector (dlarfg), the same arithmetic in every invocation.
      var xNormSq = 0.0;
      for (var t = 0u; t < WORKGROUP_SIZE; t++) {
        xNormSq += normPart[t];
      }
      let alpha = pivot;
      var tau = 0.0;
      var vScale = 0.0; // v = x · vScale below row j
      var beta = alpha;
      if (xNormSq > 0.0) {
        let magnitude = sqrt(alpha * alpha + xNormSq);
        beta = select(magnitude, -magnitude, alpha >= 0.0);
        tau = (beta - alpha) / beta;
        vScale = 1.0 / (alpha - beta);
      }
      if (tid < width) {
        var sum = 0.0;
        for (var t = 0u; t < WORKGROUP_SIZE; t++) {
          sum += partial[t][tid];
        }
        weights[tid] = pivotRow[tid] + vScale * sum;
      }
      workgroupBarrier();

      // F[j:, c] −= τ v w_c on this invocation's rows.
      if (tau != 0.0) {
        for (var i = firstRow; i < m; i += WORKGROUP_SIZE) {
          let f = tau * vScale * work[xCol + i];
          for (var c = 0u; c < width; c++) {
            work[base + (first + c) * m + i] -= f * weights[c];
          }
        }
        if (ownsPivot) {
          for (var c = 0u; c < width; c++) {
            work[base + (first + c) * m + j] -= tau * weights[c];
          }
        }
      }
      if (ownsPivot && first == j + 1u) {
        work[xCol + j] = beta;
      }
      first += COLUMNS;
      if (first >= n) {
        break;
      }
    }
  }

  // 3. R′ = the upper trapezoid of F, row i written by the invocation that owns it.
  for (var i = owner; i < k; i += WORKGROUP_SIZE) {
    for (var c = 0u; c < n; c++) {
      r[job.rOff + i * n + c] = select(0.0, work[base + c * m + i], c >= i);
    }
  }
  if (tid == 0u) {
    states[job.state] = MatrixState(e, 0u, 0u, 0u, 0.0, 0u, k, 0u);
  }
}
