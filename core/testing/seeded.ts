/**
 * The one seeded generator of the tests: mulberry32, uniform in [0, 1).
 * Tests need reproducible, varied inputs, not statistical quality; the
 * statistical tests draw from core/rng's Philox streams instead.
 */

/** A uniform generator in [0, 1). */
export type Rng = () => number;

/** mulberry32 seeded with `seed`. */
export function seededRng(seed: number): Rng {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `n` values uniform in [−1, 1) from `seed`. */
export function uniformArray(n: number, seed: number): Float32Array {
  const rng = seededRng(seed);
  return Float32Array.from({ length: n }, () => 2 * rng() - 1);
}

/** A generator of uint32 values (0..2³²−1) from `seed`. */
export function seededUint32(seed: number): () => number {
  const rng = seededRng(seed);
  return () => Math.floor(rng() * 4294967296);
}
