/**
 * The dense unbiased estimate ĝ a sample stands for, computed only from what
 * is on the wire (float32 values), as the aggregator computes it.
 */
import { idct2 } from '../linalg/dct';
import { gradientNorms } from './gradient';
import { realisedError } from './variance';
import type {
  DctSample,
  EntrySample,
  LayerSample,
  PowerSgdSample,
  QsgdSample,
  Shape,
  SpectralSample,
  TernGradSample,
} from './types';

/**
 * ĝ as a row-major rows×cols float32 matrix (docs/design.md, "Estimator": ĝ = Σᵢ (λᵢtᵢ/pᵢ) aᵢ, and the
 * QSGD/TernGrad rules).
 */
export function reconstruct(sample: LayerSample): Float32Array {
  return (RECONSTRUCTORS[sample.scheme] as (sample: LayerSample) => Float32Array)(sample);
}

/** Each scheme's reconstruction, by the scheme its samples name (the cast above pairs a sample with its own). */
const RECONSTRUCTORS: {
  readonly [K in LayerSample['scheme']]: (sample: Extract<LayerSample, { readonly scheme: K }>) => Float32Array;
} = {
  none: (sample) => sample.values.slice(),
  'atomo-entry': reconstructEntries,
  'atomo-svd': reconstructSpectral,
  qsgd: reconstructQsgd,
  terngrad: reconstructTernGrad,
  'atomo-dct': reconstructDct,
  powersgd: reconstructPowerSgd,
  'atomo-auto': (sample) => reconstruct(sample.atoms),
};

function elementsOf(sample: LayerSample): number {
  return sample.shape[0] * sample.shape[1];
}

/** The sparse matrix of the kept entries, each already λᵢ/pᵢ. */
function reconstructEntries(sample: EntrySample): Float32Array {
  const out = new Float32Array(elementsOf(sample));
  for (let k = 0; k < sample.indices.length; k++) out[sample.indices[k]!] = sample.values[k]!;
  return out;
}

/** Σ scaleᵢ uᵢvᵢᵀ. */
function reconstructSpectral(sample: SpectralSample): Float32Array {
  return sumOfOuterProducts(sample.shape, sample.count, sample.u, sample.v, sample.scales);
}

/** P̂Qᵀ = Σₐ pₐqₐᵀ, the same sum with unit scales. */
function reconstructPowerSgd(sample: PowerSgdSample): Float32Array {
  return sumOfOuterProducts(sample.shape, sample.rank, sample.p, sample.q, null);
}

/** A sample that is a sum of outer products, as rowOfOuterProducts takes it. */
export interface OuterProducts {
  readonly shape: Shape;
  readonly count: number;
  /** count·rows, atom-major. */
  readonly u: Float32Array;
  /** count·cols, atom-major. */
  readonly v: Float32Array;
  /** One per atom, or null for unit scales. */
  readonly scales: Float32Array | null;
}

/** The outer products a sample sums (atomo-svd, powersgd, atomo-auto of spectral atoms), or null for the others. */
export function outerProducts(sample: LayerSample): OuterProducts | null {
  if (sample.scheme === 'atomo-auto') return outerProducts(sample.atoms);
  if (sample.scheme === 'atomo-svd')
    return { shape: sample.shape, count: sample.count, u: sample.u, v: sample.v, scales: sample.scales };
  if (sample.scheme === 'powersgd')
    return { shape: sample.shape, count: sample.rank, u: sample.p, v: sample.q, scales: null };
  return null;
}

/**
 * A worker's two per-layer statistics of a draw: the realised ‖ĝ − g‖² and ‖g‖² (docs/design.md,
 * "Variance").
 */
export interface RealisedStats {
  readonly realised: number;
  readonly gradientNormSq: number;
}

/**
 * realisedError(reconstruct(sample), grad) and squaredNorm(grad)
 * (variance.ts), exactly: each summed in float64 entry by entry in
 * row-major order. A sum of outer products is streamed row by row, both
 * sums in the same pass, instead of formed (a 784×128 layer's ĝ is 400 kB
 * per round otherwise).
 */
export function realisedStats(sample: LayerSample, grad: Float32Array): RealisedStats {
  const { realised, gradientNormSq } = layerStatistics(sample, grad);
  return { realised, gradientNormSq };
}

/**
 * realisedStats and ‖g‖₁ (summed as l1Norm sums it, core/atomo/indicator.ts), all three from the same pass over
 * g.
 */
export interface LayerStatistics extends RealisedStats {
  readonly gradientL1: number;
}

/**
 * realisedStats(sample, grad) plus ‖g‖₁, exactly, in one pass over g: the statistics a worker reports
 * (core/training/compression.ts).
 */
export function layerStatistics(sample: LayerSample, grad: Float32Array): LayerStatistics {
  if (sample.scheme === 'atomo-auto') return layerStatistics(sample.atoms, grad);
  const products = outerProducts(sample);
  if (products === null) {
    const { normSq, l1 } = gradientNorms(grad);
    return { realised: realisedError(reconstruct(sample), grad), gradientNormSq: normSq, gradientL1: l1 };
  }
  const [rows, cols] = sample.shape;
  if (grad.length !== rows * cols)
    throw new RangeError(`realisedError: estimate has ${rows * cols} entries, gradient ${grad.length}`);
  const { count, u, v, scales } = products;
  const atoms = Array.from({ length: count }, (_, a) => v.subarray(a * cols, (a + 1) * cols));
  const none = new Float32Array(cols);
  // Per row, the atoms whose left entry is non-zero: their coefficient and their v.
  const left = new Float64Array(count);
  const right: Float32Array[] = [];
  const sum = new Float64Array(cols);
  let realised = 0;
  let gradientNormSq = 0;
  let gradientL1 = 0;
  for (let i = 0; i < rows; i++) {
    const row = i * cols;
    let used = 0;
    for (let a = 0; a < count; a++) {
      const l = (scales === null ? 1 : scales[a]!) * u[a * rows + i]!;
      if (l === 0) continue;
      left[used] = l;
      right[used++] = atoms[a]!;
    }
    if (used === 0) {
      for (let j = 0; j < cols; j++) {
        const g = grad[row + j]!;
        realised += g * g;
        gradientNormSq += g * g;
        gradientL1 += Math.abs(g);
      }
    } else if (used === 1) {
      const l0 = left[0]!;
      const v0 = right[0]!;
      for (let j = 0; j < cols; j++) {
        const g = grad[row + j]!;
        const d = Math.fround(l0 * v0[j]!) - g;
        realised += d * d;
        gradientNormSq += g * g;
        gradientL1 += Math.abs(g);
      }
    } else if (used <= 4) {
      // Up to four atoms summed without the row buffer, in atom order as rowOfOuterProducts sums them;
      // a missing atom adds 0·0, which changes no sum (at most −0 becomes +0: the same squared error).
      const l0 = left[0]!;
      const l1 = used > 1 ? left[1]! : 0;
      const l2 = used > 2 ? left[2]! : 0;
      const l3 = used > 3 ? left[3]! : 0;
      const v0 = right[0]!;
      const v1 = used > 1 ? right[1]! : none;
      const v2 = used > 2 ? right[2]! : none;
      const v3 = used > 3 ? right[3]! : none;
      for (let j = 0; j < cols; j++) {
        const g = grad[row + j]!;
        const d = Math.fround(l0 * v0[j]! + l1 * v1[j]! + l2 * v2[j]! + l3 * v3[j]!) - g;
        realised += d * d;
        gradientNormSq += g * g;
        gradientL1 += Math.abs(g);
      }
    } else {
      sum.fill(0);
      for (let a = 0; a < used; a++) {
        const l = left[a]!;
        const atom = right[a]!;
        for (let j = 0; j < cols; j++) sum[j] = sum[j]! + l * atom[j]!;
      }
      for (let j = 0; j < cols; j++) {
        const g = grad[row + j]!;
        const d = Math.fround(sum[j]!) - g;
        realised += d * d;
        gradientNormSq += g * g;
        gradientL1 += Math.abs(g);
      }
    }
  }
  return { realised, gradientNormSq, gradientL1 };
}

/**
 * Σₐ scaleₐ uₐvₐᵀ, each entry accumulated in float64 over the atoms in order
 * and rounded to float32 once. Row by row, so no full-size float64 buffer.
 */
function sumOfOuterProducts(
  shape: Shape,
  count: number,
  u: Float32Array,
  v: Float32Array,
  scales: Float32Array | null,
): Float32Array {
  const out = new Float32Array(shape[0] * shape[1]);
  outerProductsInto({ shape, count, u, v, scales }, out, 0);
  return out;
}

/**
 * Writes Σₐ scaleₐ uₐvₐᵀ (row-major) into out[offset…], which holds zeros
 * there: per entry 0 + l₁·v₁ⱼ + l₂·v₂ⱼ + … in float64 over the atoms with a
 * non-zero left coefficient lₐ = scaleₐ·uₐᵢ, in atom order, rounded to float32
 * once, exactly as rowOfOuterProducts sums a row. Rows of one or two such
 * atoms are summed without the row buffer (the same additions, from the same
 * +0); zero rows are left as they are.
 */
export function outerProductsInto(products: OuterProducts, out: Float32Array, offset: number): void {
  const { shape, count, u, v, scales } = products;
  const [rows, cols] = shape;
  const left = new Float64Array(count);
  const sum = new Float64Array(cols);
  for (let i = 0; i < rows; i++) {
    let first = -1;
    let second = -1;
    let used = 0;
    for (let a = 0; a < count; a++) {
      const l = (scales === null ? 1 : scales[a]!) * u[a * rows + i]!;
      left[a] = l;
      if (l === 0) continue;
      if (used === 0) first = a;
      else if (used === 1) second = a;
      used++;
    }
    const at = offset + i * cols;
    if (used === 1) oneAtomRow(out, at, left[first]!, v, first * cols, cols);
    else if (used === 2) twoAtomRow(out, at, left[first]!, v, first * cols, left[second]!, second * cols, cols);
    else if (used > 2 && rowOfOuterProducts(products, i, left, sum)) out.set(sum, at);
  }
}

/** out[at + j] = 0 + l0·v[r0 + j], rounded to float32. */
function oneAtomRow(out: Float32Array, at: number, l0: number, v: Float32Array, r0: number, cols: number): void {
  for (let j = 0; j < cols; j++) out[at + j] = 0 + l0 * v[r0 + j]!;
}

/** out[at + j] = 0 + l0·v[r0 + j] + l1·v[r1 + j], in float64 left to right, rounded to float32. */
function twoAtomRow(
  out: Float32Array,
  at: number,
  l0: number,
  v: Float32Array,
  r0: number,
  l1: number,
  r1: number,
  cols: number,
): void {
  for (let j = 0; j < cols; j++) out[at + j] = 0 + l0 * v[r0 + j]! + l1 * v[r1 + j]!;
}

/**
 * sum (cols values) = row i of Σₐ scaleₐ uₐvₐᵀ in float64; false (sum untouched) when the row is exactly
 * zero. `left` is scratch of count values.
 */
export function rowOfOuterProducts(
  { shape, count, u, v, scales }: OuterProducts,
  i: number,
  left: Float64Array,
  sum: Float64Array,
): boolean {
  const [rows, cols] = shape;
  let any = false;
  for (let a = 0; a < count; a++) {
    left[a] = (scales === null ? 1 : scales[a]!) * u[a * rows + i]!;
    if (left[a] !== 0) any = true;
  }
  if (!any) return false;
  sum.fill(0);
  for (let a = 0; a < count; a++) {
    const l = left[a]!;
    if (l === 0) continue;
    const right = a * cols;
    for (let j = 0; j < cols; j++) sum[j] = sum[j]! + l * v[right + j]!;
  }
  return true;
}

/** ĝᵢ = ‖g_k‖ · sign · levelᵢ/s for i in bucket k, each entry rounded to float32 once. */
function reconstructQsgd(sample: QsgdSample): Float32Array {
  const out = new Float32Array(elementsOf(sample));
  const d = sample.bucketSize === 0 ? Math.max(out.length, 1) : sample.bucketSize;
  for (let k = 0; k < sample.norms.length; k++) {
    const step = sample.norms[k]! / sample.levels;
    const end = Math.min(out.length, (k + 1) * d);
    for (let i = k * d; i < end; i++) {
      const magnitude = step * sample.level[i]!;
      out[i] = sample.negative[i] ? -magnitude : magnitude;
    }
  }
  return out;
}

/** ĝᵢ = scaler · tᵢ. */
function reconstructTernGrad(sample: TernGradSample): Float32Array {
  const out = new Float32Array(elementsOf(sample));
  for (let i = 0; i < out.length; i++) out[i] = sample.scaler * sample.ternary[i]!;
  return out;
}

/** The inverse 2-D DCT of the sparse coefficient matrix, in float64, rounded to float32 once. */
function reconstructDct(sample: DctSample): Float32Array {
  const [rows, cols] = sample.shape;
  const coefficients = new Float64Array(rows * cols);
  for (let k = 0; k < sample.indices.length; k++) coefficients[sample.indices[k]!] = sample.values[k]!;
  return Float32Array.from(idct2(coefficients, rows, cols));
}
