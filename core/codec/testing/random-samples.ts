/**
 * Seeded generators of valid layer samples for the codec tests. Values mix
 * ordinary floats with the awkward ones a bit-exact codec must carry:
 * ±0, subnormals, the largest finite float32.
 */
import { bucketCount } from '../../atomo/schemes/qsgd';
import type {
  AtomSample,
  DenseSample,
  EntrySample,
  LayerSample,
  PowerSgdSample,
  QsgdCoding,
  QsgdSample,
  SchemeName,
  Shape,
  SpectralSample,
  TernGradSample,
} from '../../atomo/types';
import type { Rng } from '../../testing/seeded';

/** An integer in lo..hi inclusive. */
export function randomInt(rng: Rng, lo: number, hi: number): number {
  return lo + Math.floor(rng() * (hi - lo + 1));
}

const AWKWARD = [
  0, -0, 1.401298464324817e-45, -1.401298464324817e-45, 1.1754942106924411e-38, 3.4028234663852886e38,
  -3.4028234663852886e38,
];

/** A finite float32 value, sometimes an awkward one. */
export function randomFloat(rng: Rng): number {
  if (rng() < 0.1) return AWKWARD[randomInt(rng, 0, AWKWARD.length - 1)]!;
  return Math.fround((rng() * 2 - 1) * 10 ** randomInt(rng, -6, 3));
}

/** `count` random finite float32 values. */
export function randomFloats(rng: Rng, count: number): Float32Array {
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) out[i] = randomFloat(rng);
  return out;
}

/** A shape up to maxDim per side, often a degenerate one (1×1, 1×n, n×1). */
export function randomShape(rng: Rng, maxDim: number): Shape {
  const pick = rng();
  if (pick < 0.1) return [1, 1];
  if (pick < 0.2) return [1, randomInt(rng, 1, maxDim)];
  if (pick < 0.3) return [randomInt(rng, 1, maxDim), 1];
  return [randomInt(rng, 1, maxDim), randomInt(rng, 1, maxDim)];
}

/** A dense sample of the given shape. */
export function randomDense(rng: Rng, shape: Shape): DenseSample {
  return { scheme: 'none', shape, values: randomFloats(rng, shape[0] * shape[1]) };
}

/** An entry-wise sample keeping each entry with probability `density` (random if omitted). */
export function randomEntry(rng: Rng, shape: Shape, density = rng() < 0.2 ? 0 : rng()): EntrySample {
  const elements = shape[0] * shape[1];
  const kept: number[] = [];
  for (let i = 0; i < elements; i++) if (rng() < density) kept.push(i);
  // As ATOMO sends them: most values ±τ, a few saturated ones of their own; or all arbitrary.
  const values = randomFloats(rng, kept.length);
  if (rng() < 0.6) {
    const tau = Math.abs(randomFloat(rng));
    for (let i = 0; i < values.length; i++) if (rng() < 0.8) values[i] = rng() < 0.5 ? tau : -tau;
  }
  return { scheme: 'atomo-entry', shape, indices: Uint32Array.from(kept), values };
}

/** A spectral sample with `count` atoms (random in 0..min(rows, cols) if omitted). */
export function randomSpectral(
  rng: Rng,
  shape: Shape,
  count = randomInt(rng, 0, Math.min(shape[0], shape[1])),
): SpectralSample {
  return {
    scheme: 'atomo-svd',
    shape,
    count,
    u: randomFloats(rng, count * shape[0]),
    v: randomFloats(rng, count * shape[1]),
    scales: randomFloats(rng, count),
  };
}

/** A PowerSGD sample of rank `rank` (random in 0..min(rows, cols) if omitted). */
export function randomPowerSgd(
  rng: Rng,
  shape: Shape,
  rank = randomInt(rng, 0, Math.min(shape[0], shape[1])),
): PowerSgdSample {
  return {
    scheme: 'powersgd',
    shape,
    rank,
    p: randomFloats(rng, rank * shape[0]),
    q: randomFloats(rng, rank * shape[1]),
  };
}

const LEVEL_CHOICES = [1, 2, 3, 4, 7, 8, 15, 16, 255, 256, 65535];

const BUCKET_CHOICES = [0, 0, 1, 3, 7, 512];

/**
 * A QSGD sample with `levels` levels, `bucketSize` and `coding` (a mix of edge cases if omitted); often sparse, as
 * QSGD's levels are. An Elias-coded one has no sign on a level-0 entry (its coding sends none).
 */
export function randomQsgd(
  rng: Rng,
  shape: Shape,
  levels = LEVEL_CHOICES[randomInt(rng, 0, LEVEL_CHOICES.length - 1)]!,
  bucketSize = BUCKET_CHOICES[randomInt(rng, 0, BUCKET_CHOICES.length - 1)]!,
  coding: QsgdCoding = rng() < 0.5 ? 'elias' : 'fixed',
): QsgdSample {
  const elements = shape[0] * shape[1];
  const negative = new Uint8Array(elements);
  const level = new Uint16Array(elements);
  const density = rng() < 0.5 ? 1 : rng();
  for (let i = 0; i < elements; i++) {
    level[i] = rng() < density ? randomInt(rng, 0, levels) : 0;
    negative[i] = (coding === 'fixed' || level[i] !== 0) && rng() < 0.5 ? 1 : 0;
  }
  const norms = Float32Array.from({ length: bucketCount(elements, bucketSize) }, () => Math.abs(randomFloat(rng)));
  return { scheme: 'qsgd', shape, levels, coding, bucketSize, norms, negative, level };
}

/** A TernGrad sample. */
export function randomTernGrad(rng: Rng, shape: Shape): TernGradSample {
  const elements = shape[0] * shape[1];
  const ternary = new Int8Array(elements);
  for (let i = 0; i < elements; i++) ternary[i] = randomInt(rng, -1, 1);
  return { scheme: 'terngrad', shape, scaler: Math.abs(randomFloat(rng)), ternary };
}

/** A random valid sample of `scheme`. */
export function randomSample(rng: Rng, scheme: SchemeName, shape: Shape): LayerSample {
  switch (scheme) {
    case 'none':
      return randomDense(rng, shape);
    case 'atomo-entry':
      return randomEntry(rng, shape);
    case 'atomo-svd':
      return randomSpectral(rng, shape);
    case 'qsgd':
      return randomQsgd(rng, shape);
    case 'terngrad':
      return randomTernGrad(rng, shape);
    case 'atomo-dct':
      return { ...randomEntry(rng, shape), scheme: 'atomo-dct' };
    case 'powersgd':
      return randomPowerSgd(rng, shape);
    case 'atomo-auto': {
      const inner = (['atomo-entry', 'atomo-svd', 'atomo-dct'] as const)[randomInt(rng, 0, 2)]!;
      return { scheme: 'atomo-auto', shape, atoms: randomSample(rng, inner, shape) as AtomSample };
    }
  }
}

/**
 * A sample with every typed array replaced by its type and raw bytes in hex,
 * so toEqual compares floats bit for bit (−0 ≠ 0), and fast: comparing
 * strings is far quicker than vitest's element-wise deep equality.
 */
export function sampleBits(sample: LayerSample): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(sample)) {
    if (ArrayBuffer.isView(value))
      out[key] = `${value.constructor.name}:${toHex(new Uint8Array(value.buffer, value.byteOffset, value.byteLength))}`;
    // atomo-auto's atoms are a sample of their own.
    else if (key === 'atoms') out[key] = sampleBits(value as LayerSample);
    else out[key] = value;
  }
  return out;
}

const HEX_DIGITS = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));

/** Bytes as a lowercase hex string. */
export function toHex(bytes: Uint8Array): string {
  let text = '';
  for (const b of bytes) text += HEX_DIGITS[b]!;
  return text;
}
