// Turns orthogonalised columns into sorted singular triplets.
//
// Input per matrix: `count` mutually orthogonal columns wⱼ (length srcLen,
// column-major in `columns`) and their companions cⱼ (length otherLen in
// `companions`) with wⱼ = W·cⱼ (or Wᵀ·cⱼ), W the scaled matrix, and the cⱼ
// orthonormal up to rounding. Then σⱼ = ‖wⱼ‖/‖cⱼ‖, and wⱼ/‖wⱼ‖ and cⱼ/‖cⱼ‖
// are the singular vectors. Dividing by ‖cⱼ‖ removes the norm drift that
// hundreds of f32 rotations leave in the accumulated cⱼ (a few 1e-6), from
// both σⱼ and the vectors. This pass sorts σ descending (ties by index), undoes the
// power-of-two scaling of svd/prepare.wgsl, and writes k triplets:
//   u: k columns of length rows, column t at uOff + t·rows (atom t's left vector)
//   s: k values at sOff
//   v: k columns of length cols, column t at vOff + t·cols
// The number of σ above cutoffRatio·σ₀ (numpy's matrix_rank rule at f32's
// ε) is stored as the matrix's rank (MatrixState.rank). Unlike the Float64
// reference, whose cutoff (~1e-13·σ₀) removes only rounding noise, these σ
// are kept: at f32 the cutoff (~1e-4·σ₀ for 784 rows) is above what Jacobi
// resolves, and zeroing them would cost more than the 1e-5 accuracy asked
// for. Only an exactly zero column gives σ = 0 and zero vectors.
//
// One workgroup per matrix; count ≤ MAX_COLUMNS.

struct Job {
  srcOff: u32,     // first float of the wⱼ in `columns`
  srcLen: u32,     // length of each wⱼ
  count: u32,      // number of columns
  otherOff: u32,   // first float of the cⱼ in `companions`
  otherLen: u32,   // length of each cⱼ
  state: u32,      // index into `states`
  srcIsU: u32,     // 1: wⱼ/σⱼ are left singular vectors (u), cⱼ right ones (v); 0: the reverse
  uOff: u32,       // output offsets (floats)
  sOff: u32,
  vOff: u32,
  k: u32,          // triplets to write, ≤ count
  cutoffRatio: f32,
}

@group(0) @binding(0) var<storage, read> jobs: array<Job>;
@group(0) @binding(1) var<storage, read> columns: array<f32>;
@group(0) @binding(2) var<storage, read> companions: array<f32>;
@group(0) @binding(3) var<storage, read_write> states: array<MatrixState>;
@group(0) @binding(4) var<storage, read_write> outU: array<f32>;
@group(0) @binding(5) var<storage, read_write> outS: array<f32>;
@group(0) @binding(6) var<storage, read_write> outV: array<f32>;

override WORKGROUP_SIZE: u32 = 256u;
const MAX_COLUMNS: u32 = 1024u;

var<workgroup> srcNorm: array<f32, MAX_COLUMNS>;   // ‖wⱼ‖
var<workgroup> otherNorm: array<f32, MAX_COLUMNS>; // ‖cⱼ‖
var<workgroup> byPosition: array<u32, MAX_COLUMNS>; // source column of output t
var<workgroup> largestBits: atomic<u32>;           // σ₀ as bits (σ ≥ 0)
var<workgroup> rankCount: atomic<u32>;

// σⱼ from the two norms (12 KiB of workgroup memory in all, under the 16 KiB default).
fn sigmaOf(wNorm: f32, cNorm: f32) -> f32 {
  return select(0.0, wNorm / cNorm, cNorm > 0.0);
}

// One workgroup per job (the frame, main, is common/jobs.wgsl).
fn runJob(job: Job, tid: u32) {
  let count = job.count;
  if (tid == 0u) {
    atomicStore(&largestBits, 0u);
    atomicStore(&rankCount, 0u);
  }
  workgroupBarrier();

  for (var j = tid; j < count; j += WORKGROUP_SIZE) {
    let col = job.srcOff + j * job.srcLen;
    var sum = 0.0;
    for (var i = 0u; i < job.srcLen; i++) {
      let x = columns[col + i];
      sum += x * x;
    }
    let other = job.otherOff + j * job.otherLen;
    var otherSum = 0.0;
    for (var i = 0u; i < job.otherLen; i++) {
      let x = companions[other + i];
      otherSum += x * x;
    }
    let wNorm = sqrt(sum);
    let cNorm = sqrt(otherSum);
    let s = sigmaOf(wNorm, cNorm);
    srcNorm[j] = wNorm;
    otherNorm[j] = cNorm;
    atomicMax(&largestBits, bitcast<u32>(s));
  }
  workgroupBarrier();
  let cutoff = job.cutoffRatio * bitcast<f32>(atomicLoad(&largestBits));

  // Position of column j in descending order: the number of columns before it.
  for (var j = tid; j < count; j += WORKGROUP_SIZE) {
    let s = sigmaOf(srcNorm[j], otherNorm[j]);
    var position = 0u;
    for (var i = 0u; i < count; i++) {
      let o = sigmaOf(srcNorm[i], otherNorm[i]);
      if (o > s || (o == s && i < j)) {
        position++;
      }
    }
    byPosition[position] = j;
    if (s > cutoff && s > 0.0) {
      atomicAdd(&rankCount, 1u);
    }
  }
  workgroupBarrier();
  let rank = atomicLoad(&rankCount);

  let unscale = powerOfTwo(states[job.state].scaleExp);
  for (var t = tid; t < job.k; t += WORKGROUP_SIZE) {
    let j = byPosition[t];
    outS[job.sOff + t] = sigmaOf(srcNorm[j], otherNorm[j]) * unscale;
  }

  // Normalised wⱼ, written column by column so neighbouring invocations write neighbouring floats.
  let srcOut = select(job.vOff, job.uOff, job.srcIsU != 0u);
  for (var idx = tid; idx < job.k * job.srcLen; idx += WORKGROUP_SIZE) {
    let t = idx / job.srcLen;
    let i = idx % job.srcLen;
    let j = byPosition[t];
    let norm = srcNorm[j];
    let value = select(0.0, columns[job.srcOff + j * job.srcLen + i] / norm, norm > 0.0 && otherNorm[j] > 0.0);
    if (job.srcIsU != 0u) {
      outU[srcOut + idx] = value;
    } else {
      outV[srcOut + idx] = value;
    }
  }
  let otherOut = select(job.uOff, job.vOff, job.srcIsU != 0u);
  for (var idx = tid; idx < job.k * job.otherLen; idx += WORKGROUP_SIZE) {
    let t = idx / job.otherLen;
    let i = idx % job.otherLen;
    let j = byPosition[t];
    let norm = otherNorm[j];
    let value = select(0.0, companions[job.otherOff + j * job.otherLen + i] / norm, norm > 0.0 && srcNorm[j] > 0.0);
    if (job.srcIsU != 0u) {
      outV[otherOut + idx] = value;
    } else {
      outU[otherOut + idx] = value;
    }
  }
  if (tid == 0u) {
    states[job.state].rank = rank;
  }
}
