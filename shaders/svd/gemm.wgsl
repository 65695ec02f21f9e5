// Batched strided product C = Xᵀ·Y for the SVD's preconditioning and top-k
// passes, each job with its own shapes:
//   C(i, j) = Σ_k X(k, i) · Y(k, j),  i < P, j < Q, k < K
// where X(k, i) is at xOff + k·xsk + i·xsi and Y(k, j) at yOff + k·ysk + j·ysj,
// and C is column-major: C(i, j) at cOff + j·ldc + i. The strides let one
// kernel form the Gram matrix WᵀW, the projection W·V and the sketches W·Ω,
// Wᵀ·Y of the randomized range finder without transposing copies.
//
// Dispatch (ceil(P/32), ceil(Q/32), jobs): a workgroup computes a 32×32 tile
// of C; its 8×8 invocations each keep a 4×4 block in registers (register
// blocking pays even on SwiftShader, see docs/design.md). K advances in chunks
// of 16, staged in workgroup memory (2 × 16×32 f32 = 4 KiB).
// Workgroups past a smaller job's P or Q return at once.

struct Job {
  xOff: u32,
  xsk: u32,
  xsi: u32,
  yOff: u32,
  ysk: u32,
  ysj: u32,
  cOff: u32,
  ldc: u32,
  P: u32,
  Q: u32,
  K: u32,
  pad: u32,
}

@group(0) @binding(0) var<storage, read> jobs: array<Job>;
@group(0) @binding(1) var<storage, read> xs: array<f32>;
@group(0) @binding(2) var<storage, read> ys: array<f32>;
@group(0) @binding(3) var<storage, read_write> cs: array<f32>;

const TILE: u32 = 32u;  // edge of the C tile (the host reads it: client/gpu/kernels/svd.ts)
const BLOCK: u32 = 4u;  // edge of each invocation's block of C
const KC: u32 = 16u;    // depth of a K chunk
const INVOCATIONS: u32 = (TILE / BLOCK) * (TILE / BLOCK);

var<workgroup> xTile: array<f32, KC * TILE>; // X(k0 + kk, i0 + ii) at kk·32 + ii
var<workgroup> yTile: array<f32, KC * TILE>; // Y(k0 + kk, j0 + jj) at kk·32 + jj

@compute @workgroup_size(TILE / BLOCK, TILE / BLOCK)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(local_invocation_id) lid: vec3<u32>,
  @builtin(local_invocation_index) tid: u32,
) {
  let job = jobs[wid.z];
  let i0 = wid.x * TILE;
  let j0 = wid.y * TILE;
  if (i0 >= job.P || j0 >= job.Q) {
    return;
  }
  var acc: array<vec4<f32>, 4>; // acc[a][b] = C(i0 + 4·lid.x + a, j0 + 4·lid.y + b)

  for (var k0 = 0u; k0 < job.K; k0 += KC) {
    // 512 elements per tile, 8 per invocation.
    for (var e = tid; e < KC * TILE; e += INVOCATIONS) {
      let kk = e / TILE;
      let ii = e % TILE;
      let k = k0 + kk;
      var xv = 0.0;
      var yv = 0.0;
      if (k < job.K) {
        if (i0 + ii < job.P) {
          xv = xs[job.xOff + k * job.xsk + (i0 + ii) * job.xsi];
        }
        if (j0 + ii < job.Q) {
          yv = ys[job.yOff + k * job.ysk + (j0 + ii) * job.ysj];
        }
      }
      xTile[e] = xv;
      yTile[e] = yv;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < KC; kk++) {
      let xb = kk * TILE + 4u * lid.x;
      let yb = kk * TILE + 4u * lid.y;
      let y4 = vec4<f32>(yTile[yb], yTile[yb + 1u], yTile[yb + 2u], yTile[yb + 3u]);
      acc[0] += xTile[xb] * y4;
      acc[1] += xTile[xb + 1u] * y4;
      acc[2] += xTile[xb + 2u] * y4;
      acc[3] += xTile[xb + 3u] * y4;
    }
    workgroupBarrier();
  }

  for (var a = 0u; a < 4u; a++) {
    let i = i0 + 4u * lid.x + a;
    if (i < job.P) {
      for (var b = 0u; b < 4u; b++) {
        let j = j0 + 4u * lid.y + b;
        if (j < job.Q) {
          cs[job.cOff + j * job.ldc + i] = acc[a][b];
        }
      }
    }
  }
}
