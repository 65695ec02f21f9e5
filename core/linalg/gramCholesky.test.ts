/**
 * CholeskyQR of a factor: RᵀR = F·Fᵀ, and Q = Fᵀ·R⁻¹ orthonormal within the
 * a-posteriori bound errorScale·‖R⁻¹‖² the factored SVD relies on, on dense,
 * sparse (as an MNIST batch is) and ill-conditioned factors.
 */
import { describe, expect, it } from 'vitest';
import { gramCholesky } from './gramCholesky';
import { randomBits } from '../rng';
import { randomMatrix } from './random-matrix';

const all = (batch: number) => Uint32Array.from({ length: batch }, (_, b) => b);

/**
 * A batch×size float32 factor of Gaussians, each entry 0 with probability `zeros` (a seeded draw), row b scaled by
 * rowScale(b).
 */
function factor(
  batch: number,
  size: number,
  seed: number,
  zeros = 0,
  rowScale: (b: number) => number = () => 1,
): Float32Array {
  const values = randomMatrix(batch, size, seed);
  const stream = { seed, worker: 0, round: 0, layer: 1 };
  return Float32Array.from(values, (x, k) =>
    randomBits(stream, k) >>> 8 < zeros * 0x1000000 ? 0 : x * rowScale(Math.floor(k / size)),
  );
}

/** Q's columns Q·eₖ = Fᵀ R⁻¹ eₖ, k < batch, each of length size. */
function columnsOfQ(qr: NonNullable<ReturnType<typeof gramCholesky>>): Float64Array[] {
  const { batch, size } = qr;
  return Array.from({ length: batch }, (_, k) => {
    const e = new Float64Array(batch);
    e[k] = 1;
    return qr.combine(qr.solve(e, new Float64Array(batch)), new Float64Array(size));
  });
}

/** normBound for each unit vector eₖ: the bound on |‖Q·eₖ‖² − 1|. */
function bounds(qr: NonNullable<ReturnType<typeof gramCholesky>>): number[] {
  return Array.from({ length: qr.batch }, (_, k) => {
    const e = new Float64Array(qr.batch);
    e[k] = 1;
    return qr.normBound(e, qr.solve(e, new Float64Array(qr.batch)));
  });
}

describe('gramCholesky', () => {
  const cases = [
    { name: 'dense 100×8', batch: 8, size: 100, f: factor(8, 100, 1) },
    {
      name: 'sparse (80% zeros) 784×13: a batch not a multiple of the 4-row blocks',
      batch: 13,
      size: 784,
      f: factor(13, 784, 2, 0.8),
    },
    { name: 'half zeros 128×32, as a ReLU delta', batch: 32, size: 128, f: factor(32, 128, 3, 0.5) },
    { name: 'one example', batch: 1, size: 9, f: factor(1, 9, 4) },
    // Row scaling is what CholeskyQR is exact about, so the bound must not grow with it.
    {
      name: 'rows graded over twelve orders of magnitude',
      batch: 6,
      size: 50,
      f: factor(6, 50, 5, 0, (b) => 10 ** (-b * 2.4)),
    },
  ];
  for (const { name, batch, size, f } of cases) {
    it(`RᵀR = F·Fᵀ and Q = Fᵀ·R⁻¹ is orthonormal within its bound: ${name}`, () => {
      const qr = gramCholesky(f, size, all(batch))!;
      expect(qr).not.toBeNull();
      const { r } = qr;
      let scale = 0;
      for (let a = 0; a < batch; a++) {
        for (let b = 0; b < batch; b++) {
          if (a > b) expect(r[a * batch + b]).toBe(0);
          if (a === b) expect(r[a * batch + a]!).toBeGreaterThan(0);
          let k = 0;
          for (let i = 0; i < size; i++) k += f[a * size + i]! * f[b * size + i]!;
          let rr = 0;
          for (let c = 0; c < batch; c++) rr += r[c * batch + a]! * r[c * batch + b]!;
          scale = Math.max(scale, Math.abs(k));
          expect(Math.abs(rr - k)).toBeLessThanOrEqual(1e-13 * scale + 1e-300);
        }
      }
      const q = columnsOfQ(qr);
      const bound = bounds(qr);
      expect(Math.max(...bound)).toBeLessThan(1e-9); // these factors are well enough conditioned for the route
      // The error of (Q·eₐ)·(Q·e_b) is within the larger of the two vectors' bounds.
      for (let a = 0; a < batch; a++) {
        for (let b = 0; b < batch; b++) {
          const error = Math.abs(q[a]!.reduce((s, x, i) => s + x * q[b]![i]!, 0) - (a === b ? 1 : 0));
          expect(error).toBeLessThanOrEqual(Math.max(bound[a]!, bound[b]!));
        }
      }
    });
  }

  for (const { name, batch, size, f } of cases) {
    it(`uniformNormBound is at least normBound for every vector it covers: ${name}`, () => {
      const qr = gramCholesky(f, size, all(batch))!;
      const ys = [
        ...Array.from({ length: batch }, (_, k) => Float64Array.from({ length: batch }, (_, i) => (i === k ? 1 : 0))),
      ];
      for (let seed = 0; seed < 8; seed++) ys.push(Float64Array.from(randomMatrix(1, batch, 100 + seed)));
      for (const y of ys) {
        const norm = Math.hypot(...y);
        const uniform = qr.uniformNormBound(norm);
        expect(uniform).toBeGreaterThanOrEqual(qr.normBound(y, qr.solve(y, new Float64Array(batch))));
        // Scaling y scales every term of normBound by the same power, and so the uniform bound.
        expect(qr.uniformNormBound(2 * norm) / uniform).toBeCloseTo(4, 12);
      }
      // These factors are well conditioned: one bound for all vectors is enough for the Gram route (factoredSvd.ts).
      expect(qr.uniformNormBound(1)).toBeLessThan(1e-9);
    });
  }

  it('uniformNormBound is far above any tolerance, or Infinity, for a repeated example', () => {
    const repeated = factor(5, 30, 8);
    repeated.copyWithin(3 * 30, 0, 30);
    const qr = gramCholesky(repeated, 30, all(5));
    expect(qr === null || qr.uniformNormBound(1) > 1e-3).toBe(true);
  });

  it('uses only the rows it is given', () => {
    const f = factor(10, 40, 6);
    const picked = Uint32Array.of(1, 4, 7);
    const qr = gramCholesky(f, 40, picked)!;
    const alone = gramCholesky(
      Float32Array.from([...f.subarray(40, 80), ...f.subarray(160, 200), ...f.subarray(280, 320)]),
      40,
      all(3),
    )!;
    expect(Array.from(qr.r)).toEqual(Array.from(alone.r));
  });

  it('breaks down (null) on a zero example, and bounds a repeated one far above any tolerance', () => {
    const zero = factor(5, 30, 7);
    zero.fill(0, 2 * 30, 3 * 30);
    expect(gramCholesky(zero, 30, all(5))).toBeNull();
    const repeated = factor(5, 30, 8);
    repeated.copyWithin(3 * 30, 0, 30);
    const qr = gramCholesky(repeated, 30, all(5));
    // Rounding may leave a tiny positive pivot; then the bound is what sends the side to Householder.
    expect(qr === null || Math.max(...bounds(qr)) > 1e-3).toBe(true);
  });

  it('refuses non-finite values', () => {
    const f = factor(3, 10, 9);
    f[12] = Number.POSITIVE_INFINITY;
    expect(() => gramCholesky(f, 10, all(3))).toThrow(RangeError);
  });
});
