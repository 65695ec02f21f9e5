/**
 * PowerSGD (Vogels, Karimireddy and Jaggi, NeurIPS 2019; docs/design.md),
 * the strongest low-rank rival of spectral ATOMO: one step of subspace
 * (power) iteration per round, warm-started from the last round's Q.
 *
 *   P ← M Q              (rows×k; Q from last round, or i.i.d. normal the first time)
 *   P̂ ← orthonormalise(P) (Gram–Schmidt)
 *   Q ← Mᵀ P̂            (cols×k, kept as the next warm start)
 *   ĝ = P̂ Qᵀ            (sent as the factors P̂ and Q: 4k(rows + cols) bytes)
 *
 * ĝ = P̂P̂ᵀM is the projection of M onto span(MQ): deterministic and biased,
 * so PowerSGD runs with error feedback (M = g + e, e ← M − ĝ; compressLayer
 * in errorFeedback.ts does that part for every scheme). Unlike the paper,
 * each worker orthonormalises its own P: the aggregator averages the
 * workers' ĝ, there is no all-reduce of P between the two half-steps.
 */
import { gaussiansFrom } from '../../linalg/random-matrix';
import { orthonormaliseColumns } from '../../linalg/orthonormalise';
import type { StreamId } from '../../rng';
import { checkGradient } from '../gradient';
import type { PowerSgdSample } from '../types';
import { realisedError } from '../variance';
import { reconstruct } from '../reconstruct';
import { DEFAULT_BUDGET, type LayerMemory, type Scheme, type SchemeOptions } from './scheme';

/** Throws RangeError unless the rank r is an integer ≥ 1 (Infinity: full rank, min(rows, cols)). */
export function checkRank(rank: number): void {
  if (!(Number.isInteger(rank) || rank === Number.POSITIVE_INFINITY) || rank < 1)
    throw new RangeError(`PowerSGD rank must be an integer ≥ 1, got ${rank}`);
}

/** The rank that `options` ask for (their budget, DEFAULT_BUDGET when unset), checked. */
function rankOf(options: SchemeOptions): number {
  const rank = options.budget ?? DEFAULT_BUDGET;
  checkRank(rank);
  return rank;
}

/**
 * The warm start Q (cols×k, row-major for the products below): the
 * remembered one when it has this shape, else i.i.d. normal from `stream`.
 * Entry (j, a) draws randomBits(stream, a·cols + j), so the first columns
 * of a rank-k start are those of any higher rank (the subspaces nest). A
 * remembered column that is zero (after a zero gradient) is drawn afresh,
 * or the iteration would stay stuck at zero.
 */
function warmStart(memory: LayerMemory | undefined, cols: number, k: number, stream: StreamId): Float64Array {
  const remembered = memory?.q?.length === k * cols ? memory.q : undefined;
  const fresh = gaussiansFrom(stream, k * cols);
  const q = new Float64Array(cols * k);
  for (let a = 0; a < k; a++) {
    let norm = 0;
    if (remembered) for (let j = 0; j < cols; j++) norm += remembered[a * cols + j]! ** 2;
    const source = norm > 0 ? remembered! : fresh;
    for (let j = 0; j < cols; j++) q[j * k + a] = source[a * cols + j]!;
  }
  return q;
}

/** One power step on the row-major rows×cols M: the factors P̂ (rows×k) and Q (cols×k), row-major. */
export function powerStep(
  m: ArrayLike<number>,
  rows: number,
  cols: number,
  q: Float64Array,
  k: number,
): { p: Float64Array; q: Float64Array } {
  const p = timesM(m, rows, cols, q, k, false); // P = M Q
  orthonormaliseColumns(p, rows, k);
  return { p, q: timesM(m, rows, cols, p, k, true) }; // Q = Mᵀ P̂
}

/**
 * M·X for X cols×k (a rows×k result) or, `transposed`, Mᵀ·X for X rows×k
 * (cols×k), all row-major, skipping M's zero entries. Each output entry sums
 * over M's entries in storage order.
 */
function timesM(
  m: ArrayLike<number>,
  rows: number,
  cols: number,
  x: Float64Array,
  k: number,
  transposed: boolean,
): Float64Array {
  const out = new Float64Array((transposed ? cols : rows) * k);
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      const entry = m[i * cols + j]!;
      if (entry === 0) continue;
      const to = (transposed ? j : i) * k;
      const from = (transposed ? i : j) * k;
      for (let a = 0; a < k; a++) out[to + a] = out[to + a]! + entry * x[from + a]!;
    }
  }
  return out;
}

/** Row-major n×k → column-major (column a at [a·n, (a+1)·n)), the wire's and the memory's factor layout. */
function columnsOf(x: Float64Array, n: number, k: number): Float64Array {
  const out = new Float64Array(n * k);
  for (let a = 0; a < k; a++) for (let i = 0; i < n; i++) out[a * n + i] = x[i * k + a]!;
  return out;
}

/**
 * PowerSGD on one layer; budget = the rank r (k = min(r, rows, cols)
 * columns are sent). With options.memory the last Q is the warm start and
 * the new Q is remembered. Its "variance" is the realised ‖ĝ − g‖² of the
 * float32 factors sent (a deterministic scheme has no other).
 */
export const powerSgdScheme: Scheme<'powersgd'> = {
  name: 'powersgd',
  compress(grad, shape, options, stream) {
    checkGradient(grad, shape);
    const [rows, cols] = shape;
    const k = Math.min(rankOf(options), rows, cols);
    const step = powerStep(grad, rows, cols, warmStart(options.memory, cols, k, stream), k);
    const q = columnsOf(step.q, cols, k);
    if (options.memory) options.memory.q = q;
    const sample: PowerSgdSample = {
      scheme: 'powersgd',
      shape,
      rank: k,
      p: Float32Array.from(columnsOf(step.p, rows, k)),
      q: Float32Array.from(q),
    };
    return { sample, variance: realisedError(reconstruct(sample), grad) };
  },
};
