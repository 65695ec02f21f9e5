/**
 * Seeded test matrices (row-major Float64Array) from the project's Philox
 * streams, so CPU and GPU tests can build the same inputs from a seed alone.
 */
import { randomBits, type StreamId } from '../rng';
import { orthonormaliseColumns } from './orthonormalise';

/** The stream every generator here draws from; `seed` picks the matrix. */
function streamOf(seed: number): StreamId {
  return { seed, worker: 0x5eed, round: 0, layer: 0 };
}

/** `count` standard normal draws (Box–Muller on pairs of 24-bit uniforms). */
export function gaussians(count: number, seed: number): Float64Array {
  return gaussiansFrom(streamOf(seed), count);
}

/**
 * `count` standard normal draws from `stream`: draw i uses randomBits(stream, i) (Box–Muller on pairs of 24-bit
 * uniforms).
 */
export function gaussiansFrom(stream: StreamId, count: number): Float64Array {
  const out = new Float64Array(count);
  for (let i = 0; i < count; i += 2) {
    // +0.5 keeps the uniform strictly inside (0, 1), so log() is finite.
    const u1 = ((randomBits(stream, i) >>> 8) + 0.5) / 0x1000000;
    const u2 = ((randomBits(stream, i + 1) >>> 8) + 0.5) / 0x1000000;
    const radius = Math.sqrt(-2 * Math.log(u1));
    out[i] = radius * Math.cos(2 * Math.PI * u2);
    if (i + 1 < count) out[i + 1] = radius * Math.sin(2 * Math.PI * u2);
  }
  return out;
}

/** A rows×cols matrix of i.i.d. standard normal entries. */
export function randomMatrix(rows: number, cols: number, seed: number): Float64Array {
  return gaussians(rows * cols, seed);
}

/** A rows×k matrix (k ≤ rows) with orthonormal columns: Gram–Schmidt, done twice for accuracy. */
export function randomOrthonormal(rows: number, k: number, seed: number): Float64Array {
  if (k > rows) throw new RangeError(`randomOrthonormal: ${k} columns do not fit in ${rows} rows`);
  const q = randomMatrix(rows, k, seed);
  orthonormaliseColumns(q, rows, k);
  return q;
}

/** U diag(σ) Vᵀ with random orthonormal U (rows×k), V (cols×k), k = σ.length: known singular values. */
export function matrixWithSingularValues(
  rows: number,
  cols: number,
  singularValues: readonly number[],
  seed: number,
): Float64Array {
  const k = singularValues.length;
  const u = randomOrthonormal(rows, k, seed);
  const v = randomOrthonormal(cols, k, seed + 1);
  return sumOverInner(rows, cols, k, (i, j, p) => u[i * k + p]! * singularValues[p]! * v[j * k + p]!);
}

/** A random rows×cols matrix of rank ≤ `rank`: the product of two Gaussian factors. */
export function lowRankMatrix(rows: number, cols: number, rank: number, seed: number): Float64Array {
  const left = randomMatrix(rows, rank, seed);
  const right = randomMatrix(rank, cols, seed + 1);
  return sumOverInner(rows, cols, rank, (i, j, p) => left[i * rank + p]! * right[p * cols + j]!);
}

/**
 * The row-major rows×cols matrix whose (i, j) entry is Σ term(i, j, p) over p < inner, summed in float64 in order of
 * p: a reference product for test matrices.
 */
export function sumOverInner(
  rows: number,
  cols: number,
  inner: number,
  term: (i: number, j: number, p: number) => number,
): Float64Array {
  const a = new Float64Array(rows * cols);
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      let sum = 0;
      for (let p = 0; p < inner; p++) sum += term(i, j, p);
      a[i * cols + j] = sum;
    }
  }
  return a;
}
