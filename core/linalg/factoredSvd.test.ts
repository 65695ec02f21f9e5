/**
 * The factored SVD of G = Xᵀ·Δ against the reference: svdJacobi on G formed
 * in Float64. σ within 1e-5 relative (Householder plus Jacobi give ~1e-12;
 * the unchecked Gram route exceeds it on near-duplicate examples), the rank-σ reconstruction equal to G, U and V
 * orthonormal, on random and adversarial factors.
 */
import { describe, expect, it } from 'vitest';
import { factoredSvd, GRAM_ROUTE_TOLERANCE, type FactorQr, type GradientFactors } from './factoredSvd';
import { applyQ, householderQr } from './householderQr';
import { LOW_RANK_RELATIVE_TOLERANCE } from './lowRankSvd';
import { randomMatrix } from './random-matrix';
import { svdJacobi } from './svd';

interface Case {
  readonly name: string;
  readonly rows: number;
  readonly cols: number;
  readonly factors: GradientFactors;
  /** The QR each factor takes by default (the Gram route where it is accurate enough, else Householder). */
  readonly qr: readonly [FactorQr, FactorQr];
  /** Distinct examples that contribute (both rows non-zero, repeats counted once), when not all do. */
  readonly examples?: number;
}

function factorsOf(
  inner: number,
  rows: number,
  cols: number,
  seed: number,
  edit?: (left: Float32Array, right: Float32Array) => void,
): GradientFactors {
  const left = Float32Array.from(randomMatrix(inner, rows, seed));
  const right = Float32Array.from(randomMatrix(inner, cols, seed + 1));
  edit?.(left, right);
  return { batch: inner, input: left, delta: right };
}

function nearDuplicates(): GradientFactors {
  const noise = randomMatrix(1, 60, 99);
  return factorsOf(6, 60, 20, 31, (left, right) => {
    for (let i = 0; i < 60; i++) left[60 + i] = left[i]! * (1 + 1e-6 * noise[i]!);
    for (let j = 0; j < 20; j++) right[20 + j] = -right[j]!;
    for (let b = 2; b < 6; b++) for (let j = 0; j < 20; j++) right[b * 20 + j]! *= 1e-6;
  });
}

/** G = Xᵀ·Δ in Float64, row-major rows×cols. */
function product(
  { batch: inner, input: left, delta: right }: GradientFactors,
  rows: number,
  cols: number,
): Float64Array {
  const g = new Float64Array(rows * cols);
  for (let b = 0; b < inner; b++) {
    for (let i = 0; i < rows; i++) {
      const l = left[b * rows + i]!;
      if (l === 0) continue;
      for (let j = 0; j < cols; j++) g[i * cols + j]! += l * right[b * cols + j]!;
    }
  }
  return g;
}

const cases: Case[] = [
  {
    name: 'random, batch below both sides',
    rows: 96,
    cols: 40,
    factors: factorsOf(8, 96, 40, 1),
    qr: ['gram', 'gram'],
  },
  {
    name: 'the MLP output layer shape, batch above cols (B > n)',
    rows: 128,
    cols: 10,
    factors: factorsOf(32, 128, 10, 3),
    qr: ['gram', 'householder'],
  },
  {
    name: 'batch above rows (B > m)',
    rows: 6,
    cols: 50,
    factors: factorsOf(12, 6, 50, 5),
    qr: ['householder', 'gram'],
  },
  {
    name: 'rank-deficient: repeated examples, a dead unit, an all-zero example',
    rows: 60,
    cols: 30,
    factors: factorsOf(10, 60, 30, 7, (left, right) => {
      left.copyWithin(3 * 60, 0, 60); // example 3 = example 0
      right.copyWithin(3 * 30, 0, 30);
      for (let b = 0; b < 10; b++) right[b * 30 + 4] = 0; // unit 4 never active
      left.fill(0, 7 * 60, 8 * 60); // example 7 is blank
    }),
    // Examples 0 and 3 are equal (input and delta): one term counted twice, so both Grams stay regular. Example 7 adds
    // 0.
    qr: ['gram', 'gram'],
    examples: 8,
  },
  {
    name: 'rank one: every example the same',
    rows: 20,
    cols: 15,
    factors: factorsOf(6, 20, 15, 9, (left, right) => {
      for (let b = 1; b < 6; b++) {
        left.copyWithin(b * 20, 0, 20);
        right.copyWithin(b * 15, 0, 15);
      }
    }),
    // One distinct example counted six times: a 1×1 Gram on each side.
    qr: ['gram', 'gram'],
    examples: 1,
  },
  {
    name: 'huge magnitudes (entries of G near 1e36)',
    rows: 40,
    cols: 24,
    factors: factorsOf(5, 40, 24, 11, (left, right) => {
      left.forEach((x, i) => (left[i] = x * 1e18));
      right.forEach((x, i) => (right[i] = x * 1e18));
    }),
    qr: ['gram', 'gram'],
  },
  {
    name: 'tiny magnitudes (entries of G near 1e-40, below float32 range)',
    rows: 40,
    cols: 24,
    factors: factorsOf(5, 40, 24, 13, (left, right) => {
      left.forEach((x, i) => (left[i] = x * 1e-20));
      right.forEach((x, i) => (right[i] = x * 1e-20));
    }),
    qr: ['gram', 'gram'],
  },
  {
    name: 'mixed magnitudes: one example 1e6 times the others',
    rows: 50,
    cols: 20,
    factors: factorsOf(8, 50, 20, 15, (left) => {
      for (let i = 0; i < 50; i++) left[2 * 50 + i]! *= 1e6;
    }),
    qr: ['gram', 'gram'], // graded examples: CholeskyQR is exact about row scaling, and its bound knows it
  },
  {
    // Examples 0 and 1 differ by 1e-6 relative and have opposite deltas, the others' deltas are 1e-6 small:
    // G lives in the inputs' 1e-6-small direction, which the Gram (condition ~1e12) resolves only to ~1e-4.
    name: 'near-duplicate examples with opposite deltas',
    rows: 60,
    cols: 20,
    factors: nearDuplicates(),
    qr: ['householder', 'householder'],
  },
  {
    name: 'sparse factors, as an MNIST batch (80% of the inputs and half the deltas zero), batch 13',
    rows: 200,
    cols: 48,
    factors: factorsOf(13, 200, 48, 17, (left, right) => {
      left.forEach((x, i) => (left[i] = Math.abs(x) < 1.28 ? 0 : x));
      right.forEach((x, i) => (right[i] = x < 0 ? 0 : x));
    }),
    qr: ['gram', 'gram'],
  },
];

describe.each<{ route: string; qr?: FactorQr }>([
  { route: 'the default route' },
  { route: 'Householder on both factors', qr: 'householder' },
])('factoredSvd(G = Xᵀ·Δ) against svdJacobi(G), $route', ({ qr }) => {
  for (const { name, rows, cols, factors, qr: expectedQr, examples } of cases) {
    it(name, () => {
      const g = product(factors, rows, cols);
      const reference = svdJacobi(g, rows, cols);
      const f = factoredSvd(factors, rows, cols, qr === undefined ? {} : { qr });
      expect(f.qr).toEqual(qr === undefined ? expectedQr : ['householder', 'householder']);
      expect(f.examples).toBe(examples ?? factors.batch);
      const normG = Math.sqrt(reference.singularValues.reduce((a, s) => a + s * s, 0));
      const expectedRank = reference.singularValues.filter((s) => s > LOW_RANK_RELATIVE_TOLERANCE * normG).length;
      expect(f.rank).toBe(expectedRank);
      for (let k = 0; k < f.rank; k++) {
        expect(Math.abs(f.singularValues[k]! - reference.singularValues[k]!)).toBeLessThanOrEqual(
          1e-5 * reference.singularValues[k]!,
        );
      }
      const svd = f.materialise();
      const r = svd.rank;
      // Orthonormal columns.
      for (const [m, vectors] of [
        [rows, svd.u],
        [cols, svd.v],
      ] as const) {
        for (let a = 0; a < r; a++) {
          for (let b = 0; b < r; b++) {
            let dot = 0;
            for (let i = 0; i < m; i++) dot += vectors[i * r + a]! * vectors[i * r + b]!;
            expect(Math.abs(dot - (a === b ? 1 : 0))).toBeLessThan(1e-10);
          }
        }
      }
      // U Σ Vᵀ rebuilds G but for the directions cut off (each below 1e-6·‖G‖_F): an entry is off by at most
      // their norm.
      const droppedSq = reference.singularValues.slice(f.rank).reduce((a, s) => a + s * s, 0);
      const dropped = Math.sqrt(droppedSq);
      // Their Σσ² is reported, to the core's rounding: each σ of R_X·R_Δᵀ is off by up to
      // ~B·ε·‖X‖_F·‖Δ‖_F (more than ε·‖G‖ where XᵀΔ cancels, as with opposite deltas), and the
      // reference reports those at zero.
      const floor = factors.batch * Number.EPSILON * Math.hypot(...factors.input) * Math.hypot(...factors.delta);
      expect(Math.abs(f.residual - droppedSq)).toBeLessThanOrEqual(1e-6 * droppedSq + factors.batch * floor ** 2);
      let worst = 0;
      for (let i = 0; i < rows; i++) {
        for (let j = 0; j < cols; j++) {
          let s = 0;
          for (let k = 0; k < r; k++) s += svd.u[i * r + k]! * svd.singularValues[k]! * svd.v[j * r + k]!;
          worst = Math.max(worst, Math.abs(s - g[i * cols + j]!));
        }
      }
      expect(worst).toBeLessThanOrEqual(dropped + 1e-10 * normG);
    });
  }
});

describe('factoredSvd', () => {
  it(
    'keeps the Gram route for examples graded over eight orders ' +
      'of magnitude, with vectors orthonormal to its tolerance',
    () => {
      // Row scaling leaves CholeskyQR exact (R scales with the rows), so the bound, which is invariant to it, stays
      // small.
      for (const grade of [0, 3, 8]) {
        const factors = factorsOf(8, 120, 30, 21, (left) => {
          for (let b = 0; b < 8; b++) for (let i = 0; i < 120; i++) left[b * 120 + i]! *= 10 ** ((-grade * b) / 7);
        });
        const f = factoredSvd(factors, 120, 30);
        expect(f.qr).toEqual(['gram', 'gram']);
        const svd = f.materialise();
        const reference = svdJacobi(product(factors, 120, 30), 120, 30);
        for (let k = 0; k < f.rank; k++)
          expect(Math.abs(svd.singularValues[k]! - reference.singularValues[k]!)).toBeLessThanOrEqual(
            1e-5 * reference.singularValues[k]!,
          );
        let worst = 0;
        for (let a = 0; a < svd.rank; a++) {
          for (let b = 0; b < svd.rank; b++) {
            let dot = 0;
            for (let i = 0; i < 120; i++) dot += svd.u[i * svd.rank + a]! * svd.u[i * svd.rank + b]!;
            worst = Math.max(worst, Math.abs(dot - (a === b ? 1 : 0)));
          }
        }
        expect(worst).toBeLessThanOrEqual(GRAM_ROUTE_TOLERANCE);
      }
    },
  );

  it('needs its check: on near-duplicate examples the unchecked Gram route is off by more than 1e-5', () => {
    const factors = nearDuplicates();
    const reference = svdJacobi(product(factors, 60, 20), 60, 20).singularValues;
    const worst = (sigma: Float64Array) =>
      Math.max(...Array.from(sigma, (s, k) => Math.abs(s - reference[k]!) / reference[k]!));
    const unchecked = factoredSvd(factors, 60, 20, { qr: 'gram' });
    expect(unchecked.qr[0]).toBe('gram');
    expect(worst(unchecked.singularValues)).toBeGreaterThan(1e-5);
    expect(worst(factoredSvd(factors, 60, 20).singularValues)).toBeLessThan(1e-9);
  });

  it('an example drawn twice into an MNIST-like batch is one term counted twice: the Gram route, the same SVD', () => {
    // Pixels k/255 on a sparse digit, ReLU deltas; example 5 repeats example 2 three times over (4 copies), as a batch
    // straddling two epochs can. Kept as separate examples, X's Gram has an exactly zero Cholesky pivot.
    const factors = factorsOf(12, 200, 24, 41, (input, delta) => {
      input.forEach((x, i) => (input[i] = Math.abs(x) < 1 ? 0 : Math.min(255, Math.round(Math.abs(x) * 60)) / 255));
      delta.forEach((x, i) => (delta[i] = x < 0 ? 0 : x / 32));
      for (const copy of [5, 8, 11]) {
        input.copyWithin(copy * 200, 2 * 200, 3 * 200);
        delta.copyWithin(copy * 24, 2 * 24, 3 * 24);
      }
    });
    const f = factoredSvd(factors, 200, 24);
    expect(f.qr).toEqual(['gram', 'gram']);
    expect(f.examples).toBe(9);
    const reference = svdJacobi(product(factors, 200, 24), 200, 24).singularValues;
    expect(f.rank).toBe(9);
    for (let k = 0; k < f.rank; k++)
      expect(Math.abs(f.singularValues[k]! - reference[k]!)).toBeLessThanOrEqual(1e-9 * reference[k]!);
    // The same G with the repeats folded into one example by hand (its delta times 4, exact in float32): the same σ.
    const folded = [0, 1, 2, 3, 4, 6, 7, 9, 10];
    const input = new Float32Array(9 * 200);
    const delta = new Float32Array(9 * 24);
    folded.forEach((b, k) => {
      input.set(factors.input.subarray(b * 200, (b + 1) * 200), k * 200);
      for (let j = 0; j < 24; j++) delta[k * 24 + j] = factors.delta[b * 24 + j]! * (b === 2 ? 4 : 1);
    });
    const byHand = factoredSvd({ batch: 9, input, delta }, 200, 24);
    for (let k = 0; k < f.rank; k++)
      expect(Math.abs(f.singularValues[k]! - byHand.singularValues[k]!)).toBeLessThanOrEqual(
        1e-12 * byHand.singularValues[k]!,
      );
  });

  it('examples with the same input but different deltas are different terms, and both are kept', () => {
    const factors = factorsOf(6, 50, 12, 43, (input) => input.copyWithin(4 * 50, 1 * 50, 2 * 50));
    const f = factoredSvd(factors, 50, 12);
    expect(f.examples).toBe(6);
    const reference = svdJacobi(product(factors, 50, 12), 50, 12).singularValues;
    expect(f.rank).toBe(5); // X has rank 5: two of its rows are one
    for (let k = 0; k < f.rank; k++)
      expect(Math.abs(f.singularValues[k]! - reference[k]!)).toBeLessThanOrEqual(1e-9 * reference[k]!);
  });

  it('reports the Σσ² of the directions it cuts off (residual), as the reference SVD has them', () => {
    // Example 3's delta is 1e-8 of the others': its direction's σ falls below the 1e-6·‖G‖_F cut-off, but not to
    // rounding.
    const factors = factorsOf(4, 40, 16, 25, (_input, delta) => {
      for (let j = 0; j < 16; j++) delta[3 * 16 + j]! *= 1e-8;
    });
    const reference = svdJacobi(product(factors, 40, 16), 40, 16).singularValues;
    const f = factoredSvd(factors, 40, 16);
    expect(f.rank).toBe(3);
    const cut = reference[3]! ** 2;
    expect(cut).toBeGreaterThan(1e-20 * reference[0]! ** 2);
    expect(Math.abs(f.residual - cut)).toBeLessThanOrEqual(1e-6 * cut);
  });

  it('zero deltas: rank 0, no triplets', () => {
    const factors = factorsOf(8, 30, 20, 17, (_input, delta) => delta.fill(0));
    const f = factoredSvd(factors, 30, 20);
    expect(f.rank).toBe(0);
    expect(f.singularValues.length).toBe(0);
    expect(() => f.leftVector(0, new Float64Array(30))).toThrow(RangeError);
  });

  it('refuses factors of the wrong size or with non-finite values', () => {
    const good = factorsOf(4, 10, 6, 19);
    expect(() => factoredSvd({ ...good, batch: 5 }, 10, 6)).toThrow(/input has 40 values/);
    expect(() => factoredSvd({ ...good, delta: new Float32Array(23) }, 10, 6)).toThrow(/delta has 23 values/);
    expect(() => factoredSvd({ ...good, batch: 0 }, 10, 6)).toThrow(/batch 0 is not/);
    const bad = { ...good, input: good.input.slice() };
    bad.input[7] = Number.NaN;
    expect(() => factoredSvd(bad, 10, 6)).toThrow(/input\[7\] is NaN/);
    const infinite = { ...good, delta: good.delta.slice() };
    infinite.delta[20] = Number.NEGATIVE_INFINITY;
    expect(() => factoredSvd(infinite, 10, 6)).toThrow(/delta\[20\] is -Infinity/);
  });
});

describe('householderQr', () => {
  for (const [m, k] of [
    [30, 7],
    [5, 9],
    [12, 12],
  ] as const) {
    it(`A = Q·R with orthonormal Q and upper-trapezoidal R (${m}×${k}, with a zero column)`, () => {
      const a = randomMatrix(k, m, 23); // column-major m×k
      a.fill(0, 2 * m, 3 * m); // column 2 is zero
      const qr = householderQr(a, m, k);
      const p = Math.min(m, k);
      const q: Float64Array[] = [];
      for (let j = 0; j < p; j++)
        q.push(
          applyQ(
            qr,
            Array.from({ length: p }, (_, i) => (i === j ? 1 : 0)),
            new Float64Array(m),
          ),
        );
      for (let a1 = 0; a1 < p; a1++) {
        for (let b = 0; b < p; b++) {
          const dot = q[a1]!.reduce((s, x, i) => s + x * q[b]![i]!, 0);
          expect(Math.abs(dot - (a1 === b ? 1 : 0))).toBeLessThan(1e-12);
        }
      }
      for (let i = 0; i < p; i++) for (let l = 0; l < Math.min(i, k); l++) expect(qr.r[i * k + l]).toBe(0);
      for (let l = 0; l < k; l++) {
        for (let i = 0; i < m; i++) {
          let s = 0;
          for (let j = 0; j < p; j++) s += q[j]![i]! * qr.r[j * k + l]!;
          expect(Math.abs(s - a[l * m + i]!)).toBeLessThan(1e-12);
        }
      }
    });
  }
});
