/**
 * Thin QR of a matrix given as k vectors of length m (column-major m×k, i.e.
 * column j at [j·m, (j+1)·m)), by Householder reflections in Float64.
 *
 * A = Q·R with p = min(m, k): Q is m×p with orthonormal columns, kept
 * implicitly as its p reflectors (Q·y costs 4·m·p flops and never forms Q),
 * and R is p×k upper trapezoidal. Householder, not Gram–Schmidt or
 * CholeskyQR: Q stays orthonormal to rounding however ill-conditioned or
 * rank-deficient A is (a zero column gives a zero row of R, nothing divides
 * by it).
 *
 * A gradient's factors are stored exactly this way: the layer input X
 * (batch×m, row-major) is Xᵀ column-major, so Xᵀ = Q_x R_x reads X in place.
 */

/** Q (implicit) and R of A = Q·R. */
export interface ThinQr {
  readonly m: number;
  readonly k: number;
  /** p = min(m, k): columns of Q, rows of R. */
  readonly p: number;
  /**
   * Reflector j (I − 2·vⱼvⱼᵀ) at [j·m, (j+1)·m): unit norm, zero before
   * index j; all zero when column j needed no reflection (H = I).
   */
  readonly reflectors: Float64Array;
  /** p×k row-major, zero below the diagonal. */
  readonly r: Float64Array;
}

/** Householder thin QR of the column-major m×k matrix `a` (not modified). */
export function householderQr(a: Float32Array | Float64Array, m: number, k: number): ThinQr {
  if (!Number.isInteger(m) || !Number.isInteger(k) || m < 1 || k < 1)
    throw new RangeError(`householderQr: bad shape ${m}×${k}`);
  if (a.length !== m * k) throw new RangeError(`householderQr: ${a.length} elements for a ${m}×${k} matrix`);
  const p = Math.min(m, k);
  const w = Float64Array.from(a);
  const reflectors = new Float64Array(m * p);
  const r = new Float64Array(p * k);
  for (let j = 0; j < p; j++) {
    const base = j * m;
    let normSq = 0;
    for (let i = j; i < m; i++) normSq += w[base + i]! * w[base + i]!;
    const norm = Math.sqrt(normSq);
    const head = w[base + j]!;
    // Below the diagonal already zero: no reflection needed (and none is safe when the column is 0).
    if (norm > 0 && normSq > head * head) {
      // v = x − α·e₀ with α = −sign(x₀)‖x‖, so no cancellation in v₀.
      const alpha = head >= 0 ? -norm : norm;
      const v = reflectors.subarray(base, base + m);
      for (let i = j; i < m; i++) v[i] = w[base + i]!;
      v[j] = head - alpha;
      const vNorm = Math.sqrt(2 * norm * (norm + Math.abs(head)));
      for (let i = j; i < m; i++) v[i]! /= vNorm;
      for (let l = j; l < k; l++) {
        const col = l * m;
        let dot = 0;
        for (let i = j; i < m; i++) dot += v[i]! * w[col + i]!;
        dot *= 2;
        for (let i = j; i < m; i++) w[col + i]! -= dot * v[i]!;
      }
    }
    for (let l = j; l < k; l++) r[j * k + l] = w[l * m + j]!;
  }
  return { m, k, p, reflectors, r };
}

/**
 * out = Q·y for y of length p (Q's m×p columns applied to y), out of length m.
 * Applies the reflectors last to first to [y; 0].
 */
export function applyQ(qr: ThinQr, y: ArrayLike<number>, out: Float64Array): Float64Array {
  const { m, p, reflectors } = qr;
  if (y.length !== p || out.length !== m)
    throw new RangeError(`applyQ: y of ${y.length} (want ${p}), out of ${out.length} (want ${m})`);
  out.fill(0);
  for (let i = 0; i < p; i++) out[i] = y[i]!;
  for (let j = p - 1; j >= 0; j--) {
    const base = j * m;
    let dot = 0;
    for (let i = j; i < m; i++) dot += reflectors[base + i]! * out[i]!;
    if (dot === 0) continue;
    dot *= 2;
    for (let i = j; i < m; i++) out[i]! -= dot * reflectors[base + i]!;
  }
  return out;
}
