// C ← α·op(A)·op(B) + β·C for a batch of row-major f32 matrices.
// CPU reference and layouts: core/linalg/matmul.ts. Host: client/gpu/kernels/matmul.ts.
//
// Program: each 8×8 workgroup computes a 32×32 tile of C, each invocation a
// 4×4 block of it held in registers. The K dimension is walked 32 at a time:
// the workgroup stages a 32×32 tile of op(A) and of op(B) in workgroup memory
// (2 × 4 KiB), then every invocation reads one vec4 of each per k and does 16
// multiply-adds. Register blocking is what makes this fast even on a CPU
// (SwiftShader): 2 loads per 16 FMAs instead of 2 per 1.
//
// Variants, chosen by the host:
//  - entry point `matmul_vec4` reads and writes whole vec4s. Only for shapes
//    where the contiguous dimension of A, B and C, every offset and every
//    batch stride are multiples of 4, so a vec4 is wholly in or out of bounds.
//  - entry point `matmul_scalar` handles any m, n, k with a bounds check per
//    element.
//  - override constants TRANS_A / TRANS_B pick the stored layouts; the
//    pipeline compiler folds the branches away.
//  - split-K: params.splits > 1 gives each job a slice of K and writes its
//    partial product to a workspace; matmul/split_k.wgsl then sums the
//    slices into C. Used when C has too few tiles to keep the device busy.
//  - workgroups loop over jobs, so the host may launch fewer workgroups than
//    tiles: on SwiftShader starting a workgroup that uses barriers costs
//    about as much as a K step, and 2–4 looping workgroups run 3–6× faster.
// Both entry points bind the same buffers, as f32 or as vec4<f32> arrays;
// a pipeline only uses one of each pair.

struct Params {
  m: u32,            // rows of op(A) and C
  n: u32,            // columns of op(B) and C
  k: u32,            // inner dimension
  batch: u32,        // number of products
  offset_a: u32,     // element offsets of matrix 0 in each buffer
  offset_b: u32,
  offset_c: u32,
  splits: u32,       // K slices per product (1: no split-K)
  stride_a: u32,     // elements between batch items (0: broadcast)
  stride_b: u32,
  stride_c: u32,
  split_k: u32,      // K elements per slice, a multiple of TILE
  alpha: f32,
  beta: f32,         // 0: C is written without being read
  stride_split: u32, // elements between the outputs of consecutive slices
  tiles: u32,        // ⌈n/32⌉·⌈m/32⌉·batch·splits: the jobs to share out
}                    // 16 × 4 bytes

const TILE: u32 = 32u;   // edge of the C tile and depth of a K step
const BLOCK: u32 = 4u;   // edge of each invocation's block of C
const THREADS: u32 = (TILE / BLOCK) * (TILE / BLOCK); // 8 × 8 invocations

override TRANS_A: bool = false; // A stored k×m
override TRANS_B: bool = false; // B stored n×k

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> a4: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read> b4: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<storage, read_write> c4: array<vec4<f32>>;

// tile_a[kk][i / 4][i % 4] = op(A)[m0 + i][k0 + kk]: k-major, so an
// invocation's 4 rows for one kk are a single vec4. 32 × 8 vec4 = 4 KiB.
var<workgroup> tile_a: array<array<vec4<f32>, 8>, TILE>;
// tile_b[kk][j / 4][j % 4] = op(B)[k0 + kk][n0 + j]. 4 KiB.
var<workgroup> tile_b: array<array<vec4<f32>, 8>, TILE>;

// One job: a 32×32 tile of C for one batch item and one K slice. Offsets in elements.
struct Job {
  m0: u32,      // first row of the C tile
  n0: u32,      // first column of the C tile
  k_begin: u32, // K slice [k_begin, k_end)
  k_end: u32,
  base_a: u32,  // start of this batch item's A, B and C (or slice output)
  base_b: u32,
  base_c: u32,
}

// Job t: tiles along n fastest, then along m, then (batch item, K slice) pairs, slice fastest.
fn job_of(t: u32) -> Job {
  let tiles_n = (params.n + TILE - 1u) / TILE;
  let tiles_m = (params.m + TILE - 1u) / TILE;
  let pair = t / (tiles_n * tiles_m);
  let item = pair / params.splits;
  let slice = pair % params.splits;
  var job: Job;
  job.m0 = (t / tiles_n) % tiles_m * TILE;
  job.n0 = t % tiles_n * TILE;
  job.k_begin = slice * params.split_k;
  job.k_end = min(params.k, job.k_begin + params.split_k);
  job.base_a = params.offset_a + item * params.stride_a;
  job.base_b = params.offset_b + item * params.stride_b;
  job.base_c = params.offset_c + item * params.stride_c + slice * params.stride_split;
  return job;
}

// Index of op(A)[row][col] in `a`, relative to the item's base.
fn index_a(row: u32, col: u32) -> u32 {
  if (TRANS_A) { return col * params.m + row; }
  return row * params.k + col;
}

// Index of op(B)[row][col] in `b`, relative to the item's base.
fn index_b(row: u32, col: u32) -> u32 {
  if (TRANS_B) { return col * params.k + row; }
  return row * params.n + col;
}

// An invocation's 4×4 block of C, one vec4 per row. A struct rather than an
// array: members are only ever named, never indexed by a variable, so every
// compiler can keep the 16 sums in registers.
struct Block {
  r0: vec4<f32>,
  r1: vec4<f32>,
  r2: vec4<f32>,
  r3: vec4<f32>,
}

// The 16 multiply-adds per k of one invocation, over the staged K step.
fn multiply_tiles(acc: ptr<function, Block>, tx: u32, ty: u32) {
  for (var kk = 0u; kk < TILE; kk++) {
    let col_a = tile_a[kk][ty]; // op(A) rows 4ty..4ty+3 at this k
    let row_b = tile_b[kk][tx]; // op(B) columns 4tx..4tx+3 at this k
    (*acc).r0 = fma(vec4(col_a.x), row_b, (*acc).r0);
    (*acc).r1 = fma(vec4(col_a.y), row_b, (*acc).r1);
    (*acc).r2 = fma(vec4(col_a.z), row_b, (*acc).r2);
    (*acc).r3 = fma(vec4(col_a.w), row_b, (*acc).r3);
  }
}

// ---- vec4 program -------------------------------------------------------

// Stages op(A)[m0.., k0..] with 256 vec4 loads, 4 per invocation. A vec4
// runs along the stored row: along m when TRANS_A (copied as is), along k
// otherwise (its lanes go to 4 consecutive kk rows).
fn load_tile_a_vec4(job: Job, k0: u32, local: u32) {
  for (var step = 0u; step < 4u; step++) {
    let slot = local + step * THREADS;
    if (TRANS_A) {
      let kk = slot / 8u;
      let i = (slot % 8u) * 4u;
      let row = job.m0 + i;
      let col = k0 + kk;
      var v = vec4(0.0);
      if (row < params.m && col < job.k_end) { v = a4[(job.base_a + index_a(row, col)) / 4u]; }
      tile_a[kk][i / 4u] = v;
    } else {
      let i = slot / 8u;
      let kk = (slot % 8u) * 4u;
      let row = job.m0 + i;
      let col = k0 + kk;
      var v = vec4(0.0);
      if (row < params.m && col < job.k_end) { v = a4[(job.base_a + index_a(row, col)) / 4u]; }
      tile_a[kk][i / 4u][i % 4u] = v.x;
      tile_a[kk + 1u][i / 4u][i % 4u] = v.y;
      tile_a[kk + 2u][i / 4u][i % 4u] = v.z;
      tile_a[kk + 3u][i / 4u][i % 4u] = v.w;
    }
  }
}

// Same for op(B)[k0.., n0..]: the stored row runs along n unless TRANS_B.
fn load_tile_b_vec4(job: Job, k0: u32, local: u32) {
  for (var step = 0u; step < 4u; step++) {
    let slot = local + step * THREADS;
    if (TRANS_B) {
      let j = slot / 8u;
      let kk = (slot % 8u) * 4u;
      let row = k0 + kk;
      let col = job.n0 + j;
      var v = vec4(0.0);
      if (row < job.k_end && col < params.n) { v = b4[(job.base_b + index_b(row, col)) / 4u]; }
      tile_b[kk][j / 4u][j % 4u] = v.x;
      tile_b[kk + 1u][j / 4u][j % 4u] = v.y;
      tile_b[kk + 2u][j / 4u][j % 4u] = v.z;
      tile_b[kk + 3u][j / 4u][j % 4u] = v.w;
    } else {
      let kk = slot / 8u;
      let j = (slot % 8u) * 4u;
      let row = k0 + kk;
      let col = job.n0 + j;
      var v = vec4(0.0);
      if (row < job.k_end && col < params.n) { v = b4[(job.base_b + index_b(row, col)) / 4u]; }
      tile_b[kk][j / 4u] = v;
    }
  }
}

@compute @workgroup_size(TILE / BLOCK, TILE / BLOCK)
fn matmul_vec4(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
               @builtin(local_invocation_id) lid: vec3<u32>, @builtin(local_invocation_index) local: u32) {
  // A workgroup takes jobs group, group + G, group + 2G, … (G workgroups in all):
  // the host may launch fewer workgroups than jobs where starting one is dear.
  for (var t = group.x + group.y * groups.x; t < params.tiles; t += groups.x * groups.y) {
    multiply_job_vec4(job_of(t), lid, local);
  }
}

fn multiply_job_vec4(job: Job, lid: vec3<u32>, local: u32) {
  var acc: Block;
  for (var k0 = job.k_begin; k0 < job.k_end; k0 += TILE) {
    load_tile_a_vec4(job, k0, local);
    load_tile_b_vec4(job, k0, local);
    workgroupBarrier();
    multiply_tiles(&acc, lid.x, lid.y);
    workgroupBarrier();
  }
  let row = job.m0 + lid.y * BLOCK;
  let col = job.n0 + lid.x * BLOCK;
  store_vec4(job, row, col, acc.r0);
  store_vec4(job, row + 1u, col, acc.r1);
  store_vec4(job, row + 2u, col, acc.r2);
  store_vec4(job, row + 3u, col, acc.r3);
}

// C[row][col..col+3] ← α·v + β·C[row][col..col+3], if inside C.
fn store_vec4(job: Job, row: u32, col: u32, v: vec4<f32>) {
  if (row >= params.m || col >= params.n) { return; }
  let at = (job.base_c + row * params.n + col) / 4u;
  var out = params.alpha * v;
  if (params.beta != 0.0) { out = fma(vec4(params.beta), c4[at], out); }
  c4[at] = out;
}

// ---- scalar program -----------------------------------------------------

// Stages op(A)[m0.., k0..] element by element, 16 per invocation,
// consecutive invocations reading consecutive stored addresses.
fn load_tile_a_scalar(job: Job, k0: u32, local: u32) {
  for (var step = 0u; step < 16u; step++) {
    let slot = local + step * THREADS;
    var i = slot / TILE;
    var kk = slot % TILE;
    if (TRANS_A) { i = slot % TILE; kk = slot / TILE; }
    let row = job.m0 + i;
    let col = k0 + kk;
    var v = 0.0;
    if (row < params.m && col < job.k_end) { v = a[job.base_a + index_a(row, col)]; }
    tile_a[kk][i / 4u][i % 4u] = v;
  }
}

fn load_tile_b_scalar(job: Job, k0: u32, local: u32) {
  for (var step = 0u; step < 16u; step++) {
    let slot = local + step * THREADS;
    var kk = slot / TILE;
    var j = slot % TILE;
    if (TRANS_B) { kk = slot % TILE; j = slot / TILE; }
    let row = k0 + kk;
    let col = job.n0 + j;
    var v = 0.0;
    if (row < job.k_end && col < params.n) { v = b[job.base_b + index_b(row, col)]; }
    tile_b[kk][j / 4u][j % 4u] = v;
  }
}

@compute @workgroup_size(TILE / BLOCK, TILE / BLOCK)
fn matmul_scalar(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                 @builtin(local_invocation_id) lid: vec3<u32>, @builtin(local_invocation_index) local: u32) {
  // A workgroup takes jobs group, group + G, group + 2G, … (G workgroups in all):
  // the host may launch fewer workgroups than jobs where starting one is dear.
  for (var t = group.x + group.y * groups.x; t < params.tiles; t += groups.x * groups.y) {
    multiply_job_scalar(job_of(t), lid, local);
  }
}

fn multiply_job_scalar(job: Job, lid: vec3<u32>, local: u32) {
  var acc: Block;
  for (var k0 = job.k_begin; k0 < job.k_end; k0 += TILE) {
    load_tile_a_scalar(job, k0, local);
    load_tile_b_scalar(job, k0, local);
    workgroupBarrier();
    multiply_tiles(&acc, lid.x, lid.y);
    workgroupBarrier();
  }
  let row = job.m0 + lid.y * BLOCK;
  let col = job.n0 + lid.x * BLOCK;
  store_scalar(job, row, col, acc.r0);
  store_scalar(job, row + 1u, col, acc.r1);
  store_scalar(job, row + 2u, col, acc.r2);
  store_scalar(job, row + 3u, col, acc.r3);
}

// C[row][col + q] ← α·v[q] + β·C[row][col + q] for the q inside C.
fn store_scalar(job: Job, row: u32, col: u32, v: vec4<f32>) {
  if (row >= params.m) { return; }
  for (var q = 0u; q < BLOCK; q++) {
    if (col + q < params.n) {
      let at = job.base_c + row * params.n + col + q;
      var out = params.alpha * v[q];
      if (params.beta != 0.0) { out = fma(params.beta, c[at], out); }
      c[at] = out;
    }
  }
}
