import { describe, expect, it } from 'vitest';
import { fft } from './fft';
import { gaussians } from './random-matrix';

/** The DFT by its definition, O(n²). */
function directDft(re: Float64Array, im: Float64Array): [Float64Array, Float64Array] {
  const n = re.length;
  const outRe = new Float64Array(n);
  const outIm = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    for (let j = 0; j < n; j++) {
      const angle = (-2 * Math.PI * j * k) / n;
      outRe[k]! += re[j]! * Math.cos(angle) - im[j]! * Math.sin(angle);
      outIm[k]! += re[j]! * Math.sin(angle) + im[j]! * Math.cos(angle);
    }
  }
  return [outRe, outIm];
}

describe('fft', () => {
  it('equals the direct DFT for every length 1..64 and for 784 = 2⁴·7², 210 = 2·3·5·7 and the prime 97', () => {
    const lengths = [...Array.from({ length: 64 }, (_, i) => i + 1), 784, 210, 97];
    for (const n of lengths) {
      const re = gaussians(n, n);
      const im = gaussians(n, n + 1000);
      const [expectRe, expectIm] = directDft(re, im);
      fft(re, im);
      let worst = 0;
      for (let k = 0; k < n; k++)
        worst = Math.max(worst, Math.abs(re[k]! - expectRe[k]!), Math.abs(im[k]! - expectIm[k]!));
      // Entries of size ~√n; float64 rounding of O(n) terms, and the direct sum's own error, stay far below 1e-9·n.
      expect(worst, `n = ${n}`).toBeLessThan(1e-9 * n);
    }
  });

  it('refuses mismatched real and imaginary parts', () => {
    expect(() => fft(new Float64Array(4), new Float64Array(3))).toThrow(RangeError);
  });
});
