// The structs that more than one kernel reads or writes, in one place: WGSL
// has no #include, so the hosts put this text in front of the kernels that
// need it (client/gpu/kernels/common.ts, withStructs / withRandomStream).
// A kernel that declares its own struct of one of these names would not
// compile: that is the point, there is one definition of each.

// A Philox stream: the address of a layer's draws (core/rng/stream.ts),
// key (seed, worker), counter (atom index, round, layer, 0); 4 × u32.
struct StreamId {
  seed: u32,
  worker: u32,
  round: u32,
  layer: u32,
}

// Per-matrix state shared by the passes of the batched SVD (shaders/svd/)
// and of the thin QR (shaders/qr/); 8 × 4 bytes, written by the host as
// zeros and read back by it (client/gpu/kernels/svd.ts, qr.ts).
struct MatrixState {
  scaleExp: i32,    // input = work · 2^scaleExp (an exact power-of-two scaling)
  phase: u32,       // id of the Jacobi phase that last ran (0: none yet)
  sweeps: u32,      // sweeps done in the current Jacobi phase
  totalSweeps: u32, // sweeps over all Jacobi phases of this matrix
  maxCos: f32,      // max |cos| between column pairs in the last sweep
  done: u32,        // 1 once the current phase met its tolerance
  rank: u32,        // σ above the cut-off (svd/sort.wgsl); columns with a reflector (qr)
  pad: u32,
}
