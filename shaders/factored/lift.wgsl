// The coefficients that lift the core's singular vectors to the gradient's
// (docs/design.md, "Decompositions"): with G = Xᵀ·Δ, Xᵀ = Q_x R_x,
// Δᵀ = Q_Δ R_Δ and the core R_x R_Δᵀ = U_c Σ V_cᵀ,
//   uₜ = G vₜ / σₜ = Xᵀ (R_Δᵀ V_c eₜ) / σₜ,   vₜ = Gᵀ uₜ / σₜ = Δᵀ (R_xᵀ U_c eₜ) / σₜ,
// so U = Xᵀ·M_u and V = Δᵀ·M_v are one product each with the factors the
// backend already holds, and no Q is ever formed. This kernel writes
//   M_uᵀ[t][b] = 2^−eₓ · Σ_j R′_Δ[j][b] V_c[t][j] / σ′ₜ
//   M_vᵀ[t][b] = 2^−e_Δ · Σ_i R′_x[i][b] U_c[t][i] / σ′ₜ
// from the scaled R′ = R·2^−e of factored/qr.wgsl and the SVD of the scaled
// core (σ′ = σ·2^−(eₓ+e_Δ)), which is exactly M_u, M_v of the unscaled maths.
// A σ′ₜ at or below cutoffRatio·σ′₀ is rounding noise: its coefficients are 0.
//
// One workgroup per job (per factored layer), one invocation per coefficient
// pair; no workgroup memory.

struct Job {
  rxOff: u32,       // R′_x (kx × batch, row-major) in `r`
  rdOff: u32,       // R′_Δ (kd × batch, row-major) in `r`
  batch: u32,
  kx: u32,          // rows of R′_x: the core's rows
  kd: u32,          // rows of R′_Δ: the core's columns
  uOff: u32,        // the core's left vectors in `coreU` (k × kx, atom-major)
  sOff: u32,        // its σ′ in `coreS` (k, descending)
  vOff: u32,        // its right vectors in `coreV` (k × kd, atom-major)
  k: u32,           // triplets
  xState: u32,      // MatrixState of X's QR (scaleExp eₓ)
  dState: u32,      // MatrixState of Δ's QR (scaleExp e_Δ)
  outOff: u32,      // M_uᵀ in `outU` and M_vᵀ in `outV` (k × batch, row-major)
  cutoffRatio: f32,
}

@group(0) @binding(0) var<storage, read> jobs: array<Job>;
@group(0) @binding(1) var<storage, read> r: array<f32>;
@group(0) @binding(2) var<storage, read> coreU: array<f32>;
@group(0) @binding(3) var<storage, read> coreS: array<f32>;
@group(0) @binding(4) var<storage, read> coreV: array<f32>;
@group(0) @binding(5) var<storage, read> states: array<MatrixState>;
@group(0) @binding(6) var<storage, read_write> outU: array<f32>;
@group(0) @binding(7) var<storage, read_write> outV: array<f32>;

override WORKGROUP_SIZE: u32 = 64u;

// One workgroup per job (the frame, main, is common/jobs.wgsl).
fn runJob(job: Job, tid: u32) {
  let n = job.batch;
  let largest = coreS[job.sOff];
  let ex = states[job.xState].scaleExp;
  let ed = states[job.dState].scaleExp;
  for (var e = tid; e < job.k * n; e += WORKGROUP_SIZE) {
    let t = e / n;
    let b = e % n;
    let sigma = coreS[job.sOff + t];
    var mu = 0.0;
    var mv = 0.0;
    if (sigma > job.cutoffRatio * largest && sigma > 0.0) {
      for (var j = 0u; j < job.kd; j++) {
        mu += r[job.rdOff + j * n + b] * coreV[job.vOff + t * job.kd + j];
      }
      for (var i = 0u; i < job.kx; i++) {
        mv += r[job.rxOff + i * n + b] * coreU[job.uOff + t * job.kx + i];
      }
      mu = ldexp(mu / sigma, -ex);
      mv = ldexp(mv / sigma, -ed);
    }
    outU[job.outOff + t * n + b] = mu;
    outV[job.outOff + t * n + b] = mv;
  }
}
