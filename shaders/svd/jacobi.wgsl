// Batched one-sided (Hestenes) Jacobi: rotates column pairs of each m×n
// matrix W (m ≥ n, column-major) until every pair is orthogonal to a relative
// tolerance, accumulating the rotations in V (n×n, column-major), so that
// W_final = W_initial · V with orthogonal columns. σⱼ = ‖wⱼ‖ and uⱼ = wⱼ/σⱼ
// are taken afterwards by svd/sort.wgsl.
//
// Parallel order: round-robin (Brent–Luk) tournament. With n′ = n rounded up
// to even, each of the n′−1 steps of a sweep pairs all columns into n′/2
// disjoint pairs, so all of a step's rotations run at once. A column index
// ≥ n is a dummy (odd n) and its pair is skipped.
//
// One workgroup per matrix (workgroup_id.x = job index). The matrix stays in
// storage memory: a 128×128 f32 block is 64 KiB, above workgroup memory.
// `tpp` invocations share a pair, each summing a strided slice of the column,
// then one of them combines the partial sums and chooses the rotation.
//
// Stopping rule (LAPACK sgesvj): a sweep in which every pair has
// |wₚ·w_q| ≤ tol·‖wₚ‖‖w_q‖ (tol = √m·ε, set by the host) rotates nothing and
// ends the phase. A dispatch runs at most `sweepsPerDispatch` sweeps; the host
// records several dispatches in one submit and a matrix that has converged
// returns at once, so there is no CPU round trip per sweep.

struct Job {
  off: u32,               // first float of W in `work`
  vOff: u32,              // first float of V in `rotations`
  m: u32,                 // rows of W (length of a column)
  n: u32,                 // columns of W, n ≤ m
  state: u32,             // index into `states`
  phase: u32,             // id of this Jacobi phase (≥ 1); a new id resets the counters
  initV: u32,             // 1: V starts as the identity; 0: keep the V already there
  sweepsPerDispatch: u32,
  maxSweeps: u32,         // cap for the phase (30)
  tol: f32,               // relative tolerance on |cos|
}

@group(0) @binding(0) var<storage, read> jobs: array<Job>;
@group(0) @binding(1) var<storage, read_write> work: array<f32>;
@group(0) @binding(2) var<storage, read_write> rotations: array<f32>;
@group(0) @binding(3) var<storage, read_write> states: array<MatrixState>;

// 64 invocations: on SwiftShader a workgroup runs on one CPU core and every
// barrier switches between its invocation groups, so a small workgroup with
// more work per invocation was fastest there (64: 0.3 s, 256: 0.5 s for a
// 64×64 matrix); a host may override it for a real GPU.
override WORKGROUP_SIZE: u32 = 64u;

// Partial sums ‖wₚ‖², ‖w_q‖², wₚ·w_q of each invocation's slice.
var<workgroup> partAlpha: array<f32, WORKGROUP_SIZE>;
var<workgroup> partBeta: array<f32, WORKGROUP_SIZE>;
var<workgroup> partGamma: array<f32, WORKGROUP_SIZE>;
// The rotation (c, s) chosen for each pair slot of the current chunk.
var<workgroup> rotC: array<f32, WORKGROUP_SIZE>;
var<workgroup> rotS: array<f32, WORKGROUP_SIZE>;
// Largest |cos| seen in this sweep, as the bits of a non-negative f32
// (their order as u32 is their order as floats).
var<workgroup> sweepMaxBits: atomic<u32>;
var<workgroup> broadcast: u32;
var<workgroup> broadcastF: f32;

// Columns of pair `pair` at step `step` of the round-robin over nn (even)
// players: player 0 stays, players 1..nn−1 turn one place per step.
fn roundRobin(pair: u32, step: u32, nn: u32) -> vec2<u32> {
  let ring = nn - 1u;
  if (pair == 0u) {
    return vec2<u32>(0u, step % ring + 1u);
  }
  return vec2<u32>((pair + step) % ring + 1u, (ring - pair + step) % ring + 1u);
}

// tan θ of the rotation that makes columns with Gram entries (α, β, γ)
// orthogonal: the smaller root of t² + 2ζt − 1 = 0, ζ = (β − α)/(2γ), so |θ| ≤ π/4.
fn rotationTangent(alpha: f32, beta: f32, gamma: f32) -> f32 {
  let zeta = (beta - alpha) / (2.0 * gamma);
  let az = abs(zeta);
  // For |ζ| > 2^30, 1 + ζ² would round to ζ² (or overflow past 2^64): t ≈ 1/(2ζ).
  var t: f32;
  if (az > 1073741824.0) {
    t = 0.5 / az;
  } else {
    t = 1.0 / (az + sqrt(1.0 + az * az));
  }
  return select(-t, t, zeta >= 0.0);
}

// One workgroup per job (the frame, main, is common/jobs.wgsl).
fn runJob(job: Job, tid: u32) {
  let m = job.m;
  let n = job.n;

  if (tid == 0u) {
    var st = states[job.state];
    var fresh = 0u;
    if (st.phase != job.phase) {
      st.phase = job.phase;
      st.sweeps = 0u;
      st.done = 0u;
      st.maxCos = 0.0;
      states[job.state] = st;
      fresh = 1u;
    }
    let stop = st.done != 0u || st.sweeps >= job.maxSweeps;
    broadcast = select(fresh, 2u, stop);
  }
  let entry = workgroupUniformLoad(&broadcast);
  if (entry == 2u) {
    return;
  }
  if (entry == 1u && job.initV != 0u) {
    for (var k = tid; k < n * n; k += WORKGROUP_SIZE) {
      rotations[job.vOff + k] = select(0.0, 1.0, k % n == k / n);
    }
  }
  storageBarrier();

  let nn = n + (n & 1u);
  let pairs = nn / 2u;
  // Invocations per pair: the largest power of two with tpp·pairs ≤ WORKGROUP_SIZE.
  var tpp = 1u;
  while (tpp * 2u * pairs <= WORKGROUP_SIZE) {
    tpp *= 2u;
  }
  let slotsPerChunk = WORKGROUP_SIZE / tpp;
  let lane = tid % tpp;
  let slot = tid / tpp;
  let base = job.off;
  let vBase = job.vOff;

  for (var s = 0u; s < job.sweepsPerDispatch; s++) {
    if (tid == 0u) {
      atomicStore(&sweepMaxBits, 0u);
    }
    workgroupBarrier();
    for (var step = 0u; step + 1u < nn; step++) {
      for (var first = 0u; first < pairs; first += slotsPerChunk) {
        let pair = first + slot;
        var p = 0u;
        var q = 0u;
        var live = false;
        if (pair < pairs) {
          let pq = roundRobin(pair, step, nn);
          p = pq.x;
          q = pq.y;
          live = p < n && q < n;
        }
        var alpha = 0.0;
        var beta = 0.0;
        var gamma = 0.0;
        if (live) {
          let cp = base + p * m;
          let cq = base + q * m;
          for (var i = lane; i < m; i += tpp) {
            let x = work[cp + i];
            let y = work[cq + i];
            alpha += x * x;
            beta += y * y;
            gamma += x * y;
          }
        }
        partAlpha[tid] = alpha;
        partBeta[tid] = beta;
        partGamma[tid] = gamma;
        workgroupBarrier();
        if (live && lane == 0u) {
          for (var l = 1u; l < tpp; l++) {
            alpha += partAlpha[tid + l];
            beta += partBeta[tid + l];
            gamma += partGamma[tid + l];
          }
          var c = 1.0;
          var sn = 0.0;
          // A zero column is orthogonal to everything.
          if (alpha > 0.0 && beta > 0.0) {
            let cosine = abs(gamma) / (sqrt(alpha) * sqrt(beta));
            atomicMax(&sweepMaxBits, bitcast<u32>(cosine));
            if (cosine > job.tol) {
              let t = rotationTangent(alpha, beta, gamma);
              // c = 1/√(1 + t²) with one Newton step on top of inverseSqrt,
              // whose few-ulp bias (WGSL allows 2 ulp) would otherwise scale
              // every column by the same factor at each rotation and make
              // V drift from orthogonal over hundreds of rotations.
              let r = 1.0 + t * t;
              let c0 = inverseSqrt(r);
              c = c0 + 0.5 * c0 * (1.0 - r * c0 * c0);
              sn = c * t;
            }
          }
          rotC[slot] = c;
          rotS[slot] = sn;
        }
        workgroupBarrier();
        if (live) {
          let sn = rotS[slot];
          if (sn != 0.0) {
            let c = rotC[slot];
            // [wₚ w_q] ← [wₚ w_q]·[[c, s], [−s, c]]; same on V's columns.
            // Each invocation rewrites only the rows it read above.
            let cp = base + p * m;
            let cq = base + q * m;
            for (var i = lane; i < m; i += tpp) {
              let x = work[cp + i];
              let y = work[cq + i];
              work[cp + i] = c * x - sn * y;
              work[cq + i] = sn * x + c * y;
            }
            let vp = vBase + p * n;
            let vq = vBase + q * n;
            for (var i = lane; i < n; i += tpp) {
              let x = rotations[vp + i];
              let y = rotations[vq + i];
              rotations[vp + i] = c * x - sn * y;
              rotations[vq + i] = sn * x + c * y;
            }
          }
        }
        // The next step pairs these columns with other invocations.
        storageBarrier();
        workgroupBarrier();
      }
    }
    if (tid == 0u) {
      broadcastF = bitcast<f32>(atomicLoad(&sweepMaxBits));
    }
    let worst = workgroupUniformLoad(&broadcastF);
    var finished = worst <= job.tol;
    if (tid == 0u) {
      var st = states[job.state];
      st.sweeps += 1u;
      st.totalSweeps += 1u;
      st.maxCos = worst;
      st.done = select(0u, 1u, finished);
      finished = finished || st.sweeps >= job.maxSweeps;
      states[job.state] = st;
      broadcast = select(0u, 1u, finished);
    }
    if (workgroupUniformLoad(&broadcast) != 0u) {
      break;
    }
  }
}
