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
// and of the thin QR (shaders/factored/qr.wgsl); 8 × 4 bytes, written by the
// host as zeros and read back by it (client/gpu/kernels/svd.ts, factored.ts).
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

// A 'valid' stride-1 convolution over a batch, as im2col and its adjoint
// col2im (shaders/layers/) read it; the host writes it from one geometry
// (client/gpu/kernels/layers.ts, convParams). count is the kernel's own
// invocations (common/elements.wgsl): the elements of what it writes.
struct ConvParams {
  channels: u32,
  batch: u32,
  height: u32,
  width: u32,
  kernel: u32,      // k (square kernel)
  out_height: u32,  // height − k + 1
  out_width: u32,   // width − k + 1
  count: u32,       // im2col: taps · B · P, elements of col; col2im: C · B · H · W, elements of dx
}

// 2×2 max-pooling, stride 2, over `planes` planes, as maxpool and
// maxpool_backward (shaders/layers/) read it.
struct PoolParams {
  planes: u32,     // channels · batch
  height: u32,     // input height (even)
  width: u32,      // input width (even)
  count: u32,      // forward: planes · (height/2) · (width/2); backward: planes · height · width
}
