// What both entry kernels (waterfill.wgsl, realised_error.wgsl) share. WGSL
// has no include: their host (client/gpu/kernels/entry.ts) puts this text in
// front of each.

// The per-layer statistics in `stats`, STATS f32 from slot·STATS: Σp,
// Σ g²(1/p − 1), ‖g‖², realised error (realised_error.wgsl), τ, saturated
// count, #non-zero, steps (waterfill.wgsl writes the others). The host reads
// them in this order (client/gpu/compression/entryCompressor.ts, STAT).
const STATS: u32 = 8u;
const REALISED: u32 = 3u; // slot of the realised error within a layer's statistics

// A chunked strided sum: terms add into `chunk`, which folds into `sum` every
// CHUNK terms, so the f32 error stays ≈ 50 ulp of the total however long the
// layer. Two sums that take a term each step fold at the same steps.
const CHUNK: u32 = 32u;

struct ChunkedSum {
  sum: f32,
  chunk: f32,
  terms: u32,
}

// An empty sum.
fn chunkedSum() -> ChunkedSum {
  return ChunkedSum(0.0, 0.0, 0u);
}

// Adds `term` to the sum at `s`.
fn addTerm(s: ptr<function, ChunkedSum>, term: f32) {
  (*s).chunk += term;
  (*s).terms++;
  if ((*s).terms == CHUNK) {
    (*s).sum += (*s).chunk;
    (*s).chunk = 0.0;
    (*s).terms = 0u;
  }
}

// The sum of every term added.
fn totalOf(s: ChunkedSum) -> f32 {
  return s.sum + s.chunk;
}
