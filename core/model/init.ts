/**
 * He initialisation (He et al. 2015, "Delving deep into rectifiers"): each
 * weight ~ N(0, 2/fanIn), biases zero. Draws come from the project's Philox
 * streams, so the initial model is a pure function of the run seed.
 */
import { randomBits, type StreamId } from '../rng';
import type { ModelLayout, ParameterTensor } from './layout';

/**
 * StreamId.layer for initialisation draws. Gradient sampling uses small layer
 * indices and core/data uses 0xda7a…; this constant keeps the initial weights
 * on streams of their own. StreamId.worker carries the tensor index.
 */
export const INIT_STREAM_TAG = 0x1417_0001;

const TWO_POW_26 = 0x4000000;
const TWO_POW_53 = 0x20000000000000;

/** The initial flat parameter vector of `layout` for run `seed`. */
export function heInitialise(layout: ModelLayout, seed: number): Float32Array {
  const params = new Float32Array(layout.parameterCount);
  layout.tensors.forEach((tensor, index) => {
    if (tensor.role === 'bias') return; // already zero
    const stream: StreamId = { seed, worker: index, round: 0, layer: INIT_STREAM_TAG };
    fillHeNormal(params.subarray(tensor.offset, tensor.offset + tensor.size), tensor, stream);
  });
  return params;
}

/** Fills `out` with N(0, 2/fanIn) draws, two per Box–Muller pair (four 32-bit words). */
function fillHeNormal(out: Float32Array, tensor: ParameterTensor, stream: StreamId): void {
  const standardDeviation = Math.sqrt(2 / tensor.fanIn);
  for (let pair = 0; 2 * pair < out.length; pair++) {
    const word = 4 * pair;
    // 1 − u lies in (0, 1], so the logarithm is finite.
    const radius = Math.sqrt(-2 * Math.log(1 - uniform53(stream, word)));
    const angle = 2 * Math.PI * uniform53(stream, word + 2);
    out[2 * pair] = standardDeviation * radius * Math.cos(angle);
    if (2 * pair + 1 < out.length) out[2 * pair + 1] = standardDeviation * radius * Math.sin(angle);
  }
}

/**
 * A uniform in [0, 1) from words `index` and `index + 1` of a stream, with 53
 * bits of resolution: core/rng's 24-bit uniform would cap |z| near 5.8σ and
 * leave visible steps in the tails of log(u).
 */
function uniform53(stream: StreamId, index: number): number {
  const high = randomBits(stream, index) >>> 5; // 27 bits
  const low = randomBits(stream, index + 1) >>> 6; // 26 bits
  return (high * TWO_POW_26 + low) / TWO_POW_53;
}
