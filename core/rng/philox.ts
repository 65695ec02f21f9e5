/**
 * Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
 * SC 2011): a counter-based generator. Output = bijection(counter, key), so any
 * draw can be recomputed from its coordinates alone, in any order, on the CPU
 * or the GPU. shaders/common/philox.wgsl implements the same function bit for bit.
 */

const M0 = 0xd2511f53;
const M1 = 0xcd9e8d57;
const W0 = 0x9e3779b9; // golden ratio
const W1 = 0xbb67ae85; // sqrt(3) - 1
const ROUNDS = 10;

/** 64-bit key as two 32-bit words. */
export type PhiloxKey = readonly [k0: number, k1: number];
/** 128-bit counter as four 32-bit words. */
export type PhiloxCounter = readonly [c0: number, c1: number, c2: number, c3: number];

/**
 * High 32 bits of the 64-bit product a·b, from 16-bit partial products: the
 * way WGSL must do it (it has no u64), so both sides share one definition.
 */
export function mulhi32(a: number, b: number): number {
  const al = a & 0xffff;
  const ah = a >>> 16;
  const bl = b & 0xffff;
  const bh = b >>> 16;
  const lolo = al * bl;
  const hilo = ah * bl;
  const lohi = al * bh;
  const hihi = ah * bh;
  const cross = (lolo >>> 16) + (hilo & 0xffff) + (lohi & 0xffff);
  return (hihi + (hilo >>> 16) + (lohi >>> 16) + (cross >>> 16)) >>> 0;
}

/** The 10-round Philox4x32 bijection; writes the four output words into `out`. */
export function philox4x32(counter: PhiloxCounter, key: PhiloxKey, out: Uint32Array = new Uint32Array(4)): Uint32Array {
  return philox4x32Words(counter[0], counter[1], counter[2], counter[3], key[0], key[1], out);
}

/**
 * philox4x32 on scalar words: the hot path, since it allocates nothing
 * (one call per atom per round adds up).
 */
export function philox4x32Words(
  c0: number,
  c1: number,
  c2: number,
  c3: number,
  k0: number,
  k1: number,
  out: Uint32Array,
): Uint32Array {
  c0 >>>= 0;
  c1 >>>= 0;
  c2 >>>= 0;
  c3 >>>= 0;
  k0 >>>= 0;
  k1 >>>= 0;
  for (let round = 0; round < ROUNDS; round++) {
    if (round > 0) {
      k0 = (k0 + W0) >>> 0;
      k1 = (k1 + W1) >>> 0;
    }
    const hi0 = mulhi32(M0, c0);
    const lo0 = Math.imul(M0, c0) >>> 0;
    const hi1 = mulhi32(M1, c2);
    const lo1 = Math.imul(M1, c2) >>> 0;
    c0 = (hi1 ^ c1 ^ k0) >>> 0;
    c1 = lo1;
    c2 = (hi0 ^ c3 ^ k1) >>> 0;
    c3 = lo0;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
  return out;
}
