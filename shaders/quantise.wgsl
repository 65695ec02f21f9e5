// Stochastic quantisation of one layer's gradient, on the GPU (docs/design.md):
//   QSGD (CODE_BITS = 8):     ĝᵢ = ‖g‖₂ sign(gᵢ) ξᵢ / s, ξᵢ ∈ {l, l+1},
//                              P(l+1) = s|gᵢ|/‖g‖₂ − l; code = sign << 7 | ξᵢ (s ≤ 127)
//   TernGrad (CODE_BITS = 2): ĝᵢ = ‖g‖∞ sign(gᵢ) tᵢ, tᵢ ~ Bernoulli(|gᵢ|/‖g‖∞);
//                              code 0 (zero), 1 (+1), 2 (−1)
// Entry i draws from streamBits(stream, i) with the integer Bernoulli test,
// as core/atomo/schemes/qsgd.ts and terngrad.ts do on the CPU. Needs
// common/philox.wgsl and common/random_stream.wgsl before it.
//
// One invocation per output word of 32 / CODE_BITS codes, so only the packed
// codes are read back. Each also writes its entries' share of the realised
// error Σ (ĝᵢ − gᵢ)² and of the closed-form variance, reduced per layer by
// reduce.wgsl afterwards.

struct Params {
  stream: StreamId,  // seed, worker, round, layer
  n: u32,            // entries of the layer
  grad_offset: u32,  // f32 index of g₀ in `gradient`
  word_offset: u32,  // index of the layer's first word in `codes` and the part buffers
  norm_index: u32,   // index of the layer's ‖g‖₂² (QSGD) or ‖g‖∞ (TernGrad) in `norms`
  levels: u32,       // QSGD s
}

override CODE_BITS: u32 = 8u;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> gradient: array<f32>;
@group(0) @binding(2) var<storage, read> norms: array<f32>;
@group(0) @binding(3) var<storage, read_write> codes: array<u32>;
@group(0) @binding(4) var<storage, read_write> realised_parts: array<f32>;
@group(0) @binding(5) var<storage, read_write> closed_parts: array<f32>;

override WORKGROUP_SIZE: u32 = 64u;

// One item per output word of 32 / CODE_BITS codes (the frame, main, is common/grid.wgsl).
fn itemCount() -> u32 {
  let per_word = 32u / CODE_BITS;
  return (params.n + per_word - 1u) / per_word;
}

fn item(w: u32) {
  let per_word = 32u / CODE_BITS;
  // QSGD's scale is the f32 norm that is sent, so E ĝ = g for the values received.
  let scale = select(sqrt(norms[params.norm_index]), norms[params.norm_index], CODE_BITS == 2u);
  var word = 0u;
  var realised = 0.0;
  var closed = 0.0;
  let first = w * per_word;
  let last = min(first + per_word, params.n);
  for (var i = first; i < last; i++) {
    let g = gradient[params.grad_offset + i];
    let magnitude = abs(g);
    var code = 0u;
    var estimate = 0.0;
    if (scale > 0.0 && magnitude > 0.0) {
      let bits = streamBits(params.stream, i);
      if (CODE_BITS == 8u) {
        let s = f32(params.levels);
        // |gᵢ| ≤ ‖g‖ up to f32 rounding of the norm: clamp so the level stays in 0..s.
        let position = min(s * magnitude / scale, s);
        let lower = min(floor(position), s);
        let fraction = position - lower;
        var level = u32(lower);
        if (fraction > 0.0 && bernoulliKeep(bits, fraction)) {
          level += 1u;
        }
        code = level | select(0u, 0x80u, g < 0.0);
        estimate = sign(g) * scale * f32(level) / s;
        let step = scale / s;
        closed += step * step * fraction * (1.0 - fraction);
      } else {
        let p = magnitude / scale;
        if (p >= 1.0 || bernoulliKeep(bits, p)) {
          code = select(1u, 2u, g < 0.0);
          estimate = sign(g) * scale;
        }
        closed += magnitude * (scale - magnitude);
      }
    }
    word |= code << ((i - first) * CODE_BITS);
    realised += (estimate - g) * (estimate - g);
  }
  codes[params.word_offset + w] = word;
  realised_parts[params.word_offset + w] = realised;
  closed_parts[params.word_offset + w] = closed;
}
