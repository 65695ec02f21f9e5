/**
 * Wire sizes of a layer, the one home of the byte formulas of
 * docs/wire-format.md: the exact body of each fixed-size scheme (the codecs
 * use these), the largest message a scheme can produce (the server's limits),
 * the expected message of a compression (the dashboard's race), and the dense
 * float32 baseline (the tab's "instead of" figure).
 */
import { bucketCount } from '../atomo/schemes/qsgd';
import { DEFAULT_QSGD_CODING } from '../atomo/schemes/scheme';
import type { Compression, QsgdCoding, SchemeName, Shape } from '../atomo/types';
import type { ModelLayout } from '../model/layout';
import { packedByteLength } from './bitpack';
import { gammaBits } from './elias';
import { HEADER_BYTES } from './header';
import { MAX_VARINT, varintLength } from './varint';

/** b = ⌈log2(s+1)⌉, the bits of a QSGD level 0..s: the bit length of s. */
export function levelBits(levels: number): number {
  return 32 - Math.clz32(levels);
}

/** Body of a dense layer of `elements` float32 values. */
export function denseBodyBytes(elements: number): number {
  return 4 * elements;
}

/** Body of a spectral layer of `atoms` rank-one atoms: u32 count, then U, V and the scales as float32. */
export function spectralBodyBytes(atoms: number, [rows, cols]: Shape): number {
  return 4 + 4 * atoms * (rows + cols + 1);
}

/** Body of a PowerSGD layer of rank k: u32 k, then P̂ (k·rows) and Q (k·cols) as float32. */
export function powerSgdBodyBytes(rank: number, [rows, cols]: Shape): number {
  return 4 + 4 * rank * (rows + cols);
}

/**
 * Body of an entry-wise (or Fourier, DCT) layer of `count` entries whose index gaps take
 * `gapBytes` in all (varints), `own` of them saturated (their own float32;
 * the others share ±τ, a 2-bit code each).
 */
export function entryBodyBytes(count: number, gapBytes: number, own: number): number {
  return 4 + gapBytes + (count > 0 ? 4 + packedByteLength(count, 2) + 4 * own : 0);
}

/** Body of an atomo-auto layer: a u8 naming the decomposition, then that decomposition's own body. */
export function autoBodyBytes(atomsBodyBytes: number): number {
  return 1 + atomsBodyBytes;
}

/** The varint lengths change at these gaps: 2⁷, 2¹⁴, 2²¹, 2²⁸ (varint.ts). */
const VARINT_STEPS = [0x80, 0x4000, 0x200000, 0x10000000] as const;

/**
 * E[Σ varint bytes of the index gaps] of an entry-wise or DCT body whose
 * atom i (in index order) is kept independently with probability pᵢ, exactly:
 * atom j, kept with pⱼ, writes gap j − prev − 1 (prev the last kept index
 * before j, or −1), whose varint has 1 + Σₜ [gap ≥ t] bytes over the steps
 * t; and gap ≥ t iff j ≥ t and none of the t atoms before j is kept,
 * probability Πᵢ (1 − pᵢ) over that window. O(n) for each step below n.
 */
export function expectedGapBytes(probabilities: ArrayLike<number>): number {
  const n = probabilities.length;
  let total = 0;
  for (let j = 0; j < n; j++) total += probabilities[j]!;
  const steps = VARINT_STEPS.filter((t) => t < n);
  if (steps.length === 0) return total;
  // Prefix sums of p, of log(1 − p) over the atoms that may be missing, and counts of those always kept (p = 1).
  const kept = new Float64Array(n + 1);
  const logMissing = new Float64Array(n + 1);
  const alwaysKept = new Uint32Array(n + 1);
  for (let i = 0; i < n; i++) {
    const p = probabilities[i]!;
    kept[i + 1] = kept[i]! + p;
    logMissing[i + 1] = logMissing[i]! + (p > 0 && p < 1 ? Math.log1p(-p) : 0);
    alwaysKept[i + 1] = alwaysKept[i]! + (p >= 1 ? 1 : 0);
  }
  for (const t of steps) {
    for (let j = t; j < n; j++) {
      const p = probabilities[j]!;
      // Π(1 − pᵢ) ≤ e^{−Σpᵢ}: a window expecting 40 atoms or more is never empty, to 4e-18.
      if (p === 0 || alwaysKept[j]! - alwaysKept[j - t]! > 0 || kept[j]! - kept[j - t]! > 40) continue;
      total += p * Math.exp(logMissing[j]! - logMissing[j - t]!);
    }
  }
  return total;
}

/**
 * E[body bytes] of an entry-wise (or DCT) layer whose `saturated` atoms are
 * always kept (p = 1, each its own float32) and whose others are kept
 * `unsaturated` times on average (±τ, a 2-bit code only), with `gapBytes` =
 * expectedGapBytes: entryBodyBytes in expectation. The code bytes E⌈count/4⌉
 * are taken as E[count]/4 + 3/8 (the rounding, about uniform) once the count
 * is random; when no unsaturated atom is kept (probability ≈ e^{−unsaturated}),
 * τ is one of the saturated values and that one needs no float of its own.
 */
export function expectedEntryBodyBytes(saturated: number, unsaturated: number, gapBytes: number): number {
  const count = saturated + unsaturated;
  if (count === 0) return 4;
  const codes = unsaturated > 0 ? count / 4 + (3 / 8) * Math.min(1, unsaturated) : packedByteLength(saturated, 2);
  const own = saturated > 0 ? saturated - Math.exp(-unsaturated) : 0;
  return 4 + gapBytes + 4 * Math.min(1, count) + codes + 4 * own;
}

/** Body of a QSGD layer: u16 levels, u32 bucket size, an f32 norm per bucket, a (1 + b)-bit code per entry. */
export function qsgdBodyBytes(elements: number, levels: number, bucketSize = 0): number {
  return 2 + 4 + 4 * bucketCount(elements, bucketSize) + packedByteLength(elements, 1 + levelBits(levels));
}

/**
 * Body of an Elias-coded QSGD layer (qsgd-elias), exactly: u16 levels, u32 bucket size, an f32 norm per bucket, then
 * a bit stream, per bucket γ(K + 1) with K its non-zero levels, and for each of them γ(gap) (its position in the
 * bucket less the previous one's, −1 before the first), a sign bit and γ(level); zero padded to a byte. It reads the
 * levels (what the fixed coding's size does not need).
 */
export function qsgdEliasBodyBytes(level: ArrayLike<number>, bucketSize: number): number {
  const n = level.length;
  const d = bucketSize === 0 ? Math.max(n, 1) : bucketSize;
  let bits = 0;
  for (let start = 0; start < n; start += d) {
    const end = Math.min(n, start + d);
    let count = 0;
    let previous = start - 1;
    for (let i = start; i < end; i++) {
      const l = level[i]!;
      if (l === 0) continue;
      count++;
      bits += gammaBits(i - previous) + 1 + gammaBits(l);
      previous = i;
    }
    bits += gammaBits(count + 1);
  }
  return 2 + 4 + 4 * bucketCount(n, bucketSize) + Math.ceil(bits / 8);
}

/**
 * The largest Elias-coded QSGD body of a layer: every entry at level s in every bucket of L entries, γ(L + 1) +
 * L·(3 + 2⌊log2 s⌋) bits a bucket. No other levels cost more: a gap g spans g entries in 2⌊log2 g⌋ + 1 ≤ 2g − 1 bits,
 * so K < L non-zero levels take at most K·(2 + 2⌊log2 s⌋) + 2L − K bits.
 */
export function maxQsgdEliasBodyBytes(elements: number, levels: number, bucketSize = 0): number {
  const d = bucketSize === 0 ? Math.max(elements, 1) : bucketSize;
  const perEntry = 2 + gammaBits(levels);
  const full = Math.floor(elements / d);
  const last = elements - full * d;
  const bucketBits = (length: number) => gammaBits(length + 1) + length * perEntry;
  const bits = full * bucketBits(d) + (last > 0 ? bucketBits(last) : 0);
  return 2 + 4 + 4 * bucketCount(elements, bucketSize) + Math.ceil(bits / 8);
}

/** Half-normal quadrature of expectedQsgdEliasBodyBytes: |z| on [0, 8) in steps of 1/64 (midpoints). */
const HALF_NORMAL_STEP = 1 / 64;
const HALF_NORMAL_POINTS = 8 * 64;

/**
 * Expected Elias-coded QSGD body of a layer whose entries are i.i.d. Gaussian, an estimate for the byte budgets
 * (core/codec/budgets.ts) and the dashboard, which have no gradient: in a bucket of L entries each entry's position
 * s|gᵢ|/‖g_k‖ is taken as s|z|/√L, z ~ N(0, 1), so a level is non-zero with probability q = E min(1, s|z|/√L) and its
 * γ bits are averaged over the two levels it rounds between; non-zero levels fall independently with probability q,
 * so a gap is ≥ 2^t (each such t adds 2 bits to its γ) when the 2^t − 1 entries before it are zero; γ(K + 1) is taken
 * at K = L·q, and the padding at 7/16 byte. Real gradients with exact zeros or heavy tails send fewer bytes.
 */
export function expectedQsgdEliasBodyBytes(elements: number, levels: number, bucketSize = 0): number {
  const d = bucketSize === 0 ? Math.max(elements, 1) : bucketSize;
  const full = Math.floor(elements / d);
  const last = elements - full * d;
  const bits = full * expectedBucketBits(d, levels) + (last > 0 ? expectedBucketBits(last, levels) : 0);
  return 2 + 4 + 4 * bucketCount(elements, bucketSize) + bits / 8 + 7 / 16;
}

/** E[bits] of one bucket of `length` Gaussian entries at `levels` (expectedQsgdEliasBodyBytes). */
function expectedBucketBits(length: number, levels: number): number {
  const scale = levels / Math.sqrt(length);
  let nonZero = 0;
  let levelBits = 0;
  for (let k = 0; k < HALF_NORMAL_POINTS; k++) {
    const z = (k + 0.5) * HALF_NORMAL_STEP;
    const weight = Math.sqrt(2 / Math.PI) * Math.exp(-0.5 * z * z) * HALF_NORMAL_STEP;
    const position = Math.min(scale * z, levels);
    const lower = Math.floor(position);
    const up = position - lower;
    nonZero += weight * (lower >= 1 ? 1 : up);
    levelBits += weight * ((lower >= 1 ? (1 - up) * gammaBits(lower) : 0) + up * gammaBits(lower + 1));
  }
  const q = Math.min(1, nonZero);
  // Σ over positions r of q·(γ bits of its gap): 1 + 2·[gap ≥ 2^t] for each t, P(gap ≥ 2^t) = (1 − q)^(2^t − 1).
  let gapBits = length * q;
  for (let t = 1; 2 ** t <= length; t++) gapBits += 2 * q * (length - 2 ** t + 1) * (1 - q) ** (2 ** t - 1);
  return gammaBits(Math.round(length * q) + 1) + gapBits + length * (q + levelBits);
}

/** Body of a TernGrad layer: f32 scaler, 2 bits per entry. */
export function terngradBodyBytes(elements: number): number {
  return 4 + packedByteLength(elements, 2);
}

/** Bytes of one layer of `shape` sent as dense float32 (scheme `none`). */
export function denseLayerBytes([rows, cols]: Shape): number {
  return HEADER_BYTES + denseBodyBytes(rows * cols);
}

/** Bytes of a whole model's gradient as dense float32 layers: the baseline every chart compares to. */
export function denseBytes(layout: ModelLayout): number {
  return layout.tensors.reduce((sum, tensor) => sum + denseLayerBytes(tensor.shape), 0);
}

/**
 * Upper bound on the encoded bytes of one layer under `scheme`, the byte
 * formulas at their largest: entry-wise every entry kept, saturated, with a
 * 5-byte varint; spectral k = min(rows, cols) atoms.
 */
export function maxLayerBytes(
  scheme: SchemeName,
  shape: Shape,
  levels: number,
  bucketSize = 0,
  qsgdCoding: QsgdCoding = DEFAULT_QSGD_CODING,
): number {
  const [rows, cols] = shape;
  const elements = rows * cols;
  switch (scheme) {
    case 'atomo-auto':
      return (
        HEADER_BYTES +
        autoBodyBytes(
          Math.max(
            maxLayerBytes('atomo-entry', shape, levels) - HEADER_BYTES,
            maxLayerBytes('atomo-svd', shape, levels) - HEADER_BYTES,
          ),
        )
      );
    case 'none':
      return denseLayerBytes(shape);
    case 'atomo-entry':
    case 'atomo-dct':
      return HEADER_BYTES + entryBodyBytes(elements, varintLength(MAX_VARINT) * elements, elements);
    case 'atomo-svd':
      return HEADER_BYTES + spectralBodyBytes(Math.min(rows, cols), shape);
    case 'qsgd':
      return (
        HEADER_BYTES +
        (qsgdCoding === 'elias'
          ? maxQsgdEliasBodyBytes(elements, levels, bucketSize)
          : qsgdBodyBytes(elements, levels, bucketSize))
      );
    case 'terngrad':
      return HEADER_BYTES + terngradBodyBytes(elements);
    case 'powersgd':
      return HEADER_BYTES + powerSgdBodyBytes(Math.min(rows, cols), shape);
  }
}

/**
 * Expected encoded bytes of one layer under `compression`. Spectral ATOMO
 * sends s atoms in expectation, at most rank ≤ min(rows, cols, batch) of
 * them; PowerSGD its rank r ≤ min(rows, cols) factor pairs; entry-wise and
 * Fourier (DCT) ATOMO s entries or coefficients, each a 2-bit code and a varint gap whose
 * size is taken at the mean gap, none saturated (an approximation that
 * undercounts by 4 bytes per saturated entry); Elias-coded QSGD its bytes for
 * Gaussian entries (expectedQsgdEliasBodyBytes); the others are fixed-size.
 * Never more than the dense layer: a worker sends that instead
 * (encodeForWire in core/codec/index.ts).
 */
export function expectedLayerBytes(compression: Compression, shape: Shape, batchSize: number): number {
  return Math.min(schemeLayerBytes(compression, shape, batchSize), denseLayerBytes(shape));
}

/** expectedLayerBytes before the dense fallback. */
function schemeLayerBytes(compression: Compression, shape: Shape, batchSize: number): number {
  const [rows, cols] = shape;
  const elements = rows * cols;
  switch (compression.scheme) {
    case 'atomo-auto':
      // Only a byte budget for the whole model says what atomo-auto sends (expectedBytes); per layer, no more than
      // float32.
      return denseLayerBytes(shape);
    case 'atomo-svd':
      return HEADER_BYTES + spectralBodyBytes(Math.min(compression.budget, rows, cols, batchSize), shape);
    case 'powersgd':
      return HEADER_BYTES + powerSgdBodyBytes(Math.min(compression.budget, rows, cols), shape);
    case 'atomo-entry':
    case 'atomo-dct': {
      const kept = Math.min(compression.budget, elements);
      return HEADER_BYTES + entryBodyBytes(kept, kept * varintLength(Math.round(elements / Math.max(kept, 1))), 0);
    }
    case 'qsgd':
      if ((compression.qsgdCoding ?? DEFAULT_QSGD_CODING) === 'elias') {
        return HEADER_BYTES + expectedQsgdEliasBodyBytes(elements, compression.levels, compression.bucketSize ?? 0);
      }
      return HEADER_BYTES + qsgdBodyBytes(elements, compression.levels, compression.bucketSize ?? 0);
    default:
      return maxLayerBytes(compression.scheme, shape, compression.levels, compression.bucketSize ?? 0);
  }
}

/**
 * Expected bytes of one worker's gradient for one round of `layout` under
 * `compression`: its byte budget when it has one (the split across layers
 * spends it, core/atomo/byteBudget.ts; never more than float32), else the
 * sum of expectedLayerBytes.
 */
export function expectedBytes(layout: ModelLayout, compression: Compression, batchSize: number): number {
  if (compression.byteBudget !== undefined) return Math.min(compression.byteBudget, denseBytes(layout));
  return layout.tensors.reduce((sum, tensor) => sum + expectedLayerBytes(compression, tensor.shape, batchSize), 0);
}

/**
 * The smallest byte budget a layer can be given (core/schema's lower bound
 * is this times the model's tensors): a header, an entry count, τ, a code
 * byte and a gap varint of up to 5 bytes, for an expected single atom.
 */
export const MIN_LAYER_BYTE_BUDGET = HEADER_BYTES + 4 + 4 + 1 + 5 + 4;
