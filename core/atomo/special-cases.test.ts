/**
 * docs/design.md, "Schemes: variance and bytes": 1-bit QSGD is ATOMO on entries with s = ‖g‖₁/‖g‖₂, and
 * TernGrad is ATOMO on entries with s = ‖g‖₁/‖g‖∞. With the same stream the
 * samples coincide: entry i draws randomBits(stream, i) in every scheme.
 */
import { describe, expect, it } from 'vitest';
import type { StreamId } from '../rng';
import { reconstruct } from './reconstruct';
import { atomoEntryScheme } from './schemes/atomo-entry';
import { qsgdScheme } from './schemes/qsgd';
import { terngradScheme } from './schemes/terngrad';
import { lowRankGradient, randomGradient } from './testing/gradients';
import { samplingProbabilities } from './waterfilling';

const stream = (seed: number): StreamId => ({ seed, worker: 3, round: 7, layer: 1 });

function norms(g: Float32Array): { l1: number; l2: number; linf: number } {
  let l1 = 0;
  let l2 = 0;
  let linf = 0;
  for (const x of g) {
    l1 += Math.abs(x);
    l2 += x * x;
    linf = Math.max(linf, Math.abs(x));
  }
  return { l1, l2: Math.sqrt(l2), linf };
}

/** Indices whose estimates differ by more than `relative`·max(|a|, |b|), or whose kept-ness differs. */
function mismatches(a: Float32Array, b: Float32Array, relative: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if ((x === 0) !== (y === 0) || Math.abs(x - y) > relative * Math.max(Math.abs(x), Math.abs(y))) out.push(i);
  }
  return out;
}

// Both sides send one float32 rounding of the same real number (‖g‖₂ or
// ‖g‖∞ times a sign), computed along different paths (λ/p vs the norm), so
// they may differ by an ulp or two: 4·2⁻²⁴ relative. Whether an entry is kept
// can differ only if the two p round to different 24-bit thresholds and the
// draw lands exactly between them (probability ~2⁻²⁴ per entry), so we
// require identical kept sets.
const ULPS = 4 * 2 ** -24;

describe.each([randomGradient(), lowRankGradient()])('special cases on the $name gradient', ({ grad, shape }) => {
  const { l1, l2, linf } = norms(grad);

  it('ATOMO-entry with s = ‖g‖₁/‖g‖₂ has p = |g|/‖g‖₂ and the samples of 1-bit QSGD', () => {
    const budget = l1 / l2;
    const p = samplingProbabilities(grad, budget);
    const worst = Math.max(...p.map((x, i) => Math.abs(x - Math.abs(grad[i]!) / l2)));
    expect(worst).toBeLessThan(1e-12); // the same ratio computed two ways: a few ulps
    for (let seed = 0; seed < 20; seed++) {
      const atomo = atomoEntryScheme.compress(grad, shape, { budget }, stream(seed));
      const qsgd = qsgdScheme.compress(grad, shape, { levels: 1 }, stream(seed));
      expect(mismatches(reconstruct(atomo.sample), reconstruct(qsgd.sample), ULPS)).toEqual([]);
      // Equal up to QSGD using the float32 norm it sends (2⁻²⁴ relative): 1e-6 relative.
      expect(atomo.variance).toBeCloseTo(qsgd.variance, 6 - Math.ceil(Math.log10(qsgd.variance)));
    }
  });

  it('ATOMO-entry with s = ‖g‖₁/‖g‖∞ has p = |g|/‖g‖∞ and the samples of TernGrad', () => {
    const budget = l1 / linf;
    const p = samplingProbabilities(grad, budget);
    const worst = Math.max(...p.map((x, i) => Math.abs(x - Math.abs(grad[i]!) / linf)));
    expect(worst).toBeLessThan(1e-12);
    for (let seed = 0; seed < 20; seed++) {
      const atomo = atomoEntryScheme.compress(grad, shape, { budget }, stream(seed));
      const tern = terngradScheme.compress(grad, shape, {}, stream(seed));
      expect(mismatches(reconstruct(atomo.sample), reconstruct(tern.sample), ULPS)).toEqual([]);
      expect(atomo.variance).toBeCloseTo(tern.variance, 6 - Math.ceil(Math.log10(tern.variance)));
    }
  });
});
