/**
 * The discrete Fourier transform of any length, X[k] = Σⱼ x[j] e^{−2πijk/n},
 * by mixed-radix Stockham autosort (iterative decimation in frequency, no
 * bit reversal): radix-4 and radix-2 butterflies written out, any other
 * prime factor by its own small DFT, a prime length by the direct O(n²) sum.
 * 784 = 4²·7² and 128 = 4³·2 take four stages. A plan per length keeps the
 * twiddles and the two ping-pong buffers, so a transform allocates nothing.
 * The CPU path of the fast DCT (dct.ts); float64 throughout.
 */

/** Everything one length needs: its radices, e^{−2πik/n} for k < n, and two work buffers. */
interface FftPlan {
  readonly n: number;
  readonly radices: readonly number[];
  readonly cos: Float64Array;
  readonly sin: Float64Array;
  readonly re: readonly [Float64Array, Float64Array];
  readonly im: readonly [Float64Array, Float64Array];
}

const plans = new Map<number, FftPlan>();

/** n's factors, fours first, then twos, then the odd primes ascending. */
function radicesOf(n: number): number[] {
  const radices: number[] = [];
  let rest = n;
  while (rest % 4 === 0) {
    radices.push(4);
    rest /= 4;
  }
  if (rest % 2 === 0) {
    radices.push(2);
    rest /= 2;
  }
  for (let p = 3; rest > 1; p += 2) {
    if (p * p > rest) {
      radices.push(rest);
      break;
    }
    while (rest % p === 0) {
      radices.push(p);
      rest /= p;
    }
  }
  return radices;
}

function planFor(n: number): FftPlan {
  let plan = plans.get(n);
  if (plan === undefined) {
    const cos = new Float64Array(n);
    const sin = new Float64Array(n);
    for (let k = 0; k < n; k++) {
      cos[k] = Math.cos((2 * Math.PI * k) / n);
      sin[k] = Math.sin((2 * Math.PI * k) / n);
    }
    plan = {
      n,
      radices: radicesOf(n),
      cos,
      sin,
      re: [new Float64Array(n), new Float64Array(n)],
      im: [new Float64Array(n), new Float64Array(n)],
    };
    plans.set(n, plan);
  }
  return plan;
}

/**
 * The DFT of the complex vector (re, im) of length n, in place. Both arrays
 * hold n values. The inverse DFT is conj(DFT(conj x))/n.
 */
export function fft(re: Float64Array, im: Float64Array): void {
  const n = re.length;
  if (im.length !== n) throw new RangeError(`fft: ${n} real parts but ${im.length} imaginary parts`);
  if (n <= 1) return;
  const plan = planFor(n);
  let from: 0 | 1 = 0;
  plan.re[0].set(re);
  plan.im[0].set(im);
  // Stage with radix p on sub-sequences of length len = N/s at stride s:
  // y[q + s(p·j + t)] = W_len^{jt} · Σᵣ x[q + s(j + r·len/p)] W_p^{rt}.
  let s = 1;
  for (const p of plan.radices) {
    const to: 0 | 1 = from === 0 ? 1 : 0;
    stage(plan, p, s, plan.re[from], plan.im[from], plan.re[to], plan.im[to]);
    from = to;
    s *= p;
  }
  re.set(plan.re[from]);
  im.set(plan.im[from]);
}

/** One Stockham stage of radix p at stride s (docs in fft()). The twiddle W_len^{jt} is W_N^{j·t·s}, index < N. */
function stage(
  plan: FftPlan,
  p: number,
  s: number,
  xr: Float64Array,
  xi: Float64Array,
  yr: Float64Array,
  yi: Float64Array,
): void {
  const { n, cos, sin } = plan;
  const m = n / (s * p); // the length each sub-sequence has after this stage
  const sm = s * m;
  if (p === 4) {
    for (let j = 0; j < m; j++) {
      const w1 = j * s;
      const c1 = cos[w1]!;
      const s1 = sin[w1]!;
      const c2 = cos[2 * w1]!;
      const s2 = sin[2 * w1]!;
      const c3 = cos[3 * w1]!;
      const s3 = sin[3 * w1]!;
      for (let q = 0; q < s; q++) {
        const a = q + s * j;
        const a0r = xr[a]!;
        const a0i = xi[a]!;
        const a1r = xr[a + sm]!;
        const a1i = xi[a + sm]!;
        const a2r = xr[a + 2 * sm]!;
        const a2i = xi[a + 2 * sm]!;
        const a3r = xr[a + 3 * sm]!;
        const a3i = xi[a + 3 * sm]!;
        // W₄ = −i: X₀ = t0 + t2, X₁ = t1 − i·t3, X₂ = t0 − t2, X₃ = t1 + i·t3.
        const t0r = a0r + a2r;
        const t0i = a0i + a2i;
        const t1r = a0r - a2r;
        const t1i = a0i - a2i;
        const t2r = a1r + a3r;
        const t2i = a1i + a3i;
        const t3r = a1r - a3r;
        const t3i = a1i - a3i;
        const b = q + s * 4 * j;
        yr[b] = t0r + t2r;
        yi[b] = t0i + t2i;
        // (x + iy)·e^{−iθ} = (x cosθ + y sinθ) + i(y cosθ − x sinθ)
        const u1r = t1r + t3i;
        const u1i = t1i - t3r;
        yr[b + s] = u1r * c1 + u1i * s1;
        yi[b + s] = u1i * c1 - u1r * s1;
        const u2r = t0r - t2r;
        const u2i = t0i - t2i;
        yr[b + 2 * s] = u2r * c2 + u2i * s2;
        yi[b + 2 * s] = u2i * c2 - u2r * s2;
        const u3r = t1r - t3i;
        const u3i = t1i + t3r;
        yr[b + 3 * s] = u3r * c3 + u3i * s3;
        yi[b + 3 * s] = u3i * c3 - u3r * s3;
      }
    }
    return;
  }
  if (p === 2) {
    for (let j = 0; j < m; j++) {
      const c = cos[j * s]!;
      const si = sin[j * s]!;
      for (let q = 0; q < s; q++) {
        const a = q + s * j;
        const b = q + s * 2 * j;
        const dr = xr[a]! - xr[a + sm]!;
        const di = xi[a]! - xi[a + sm]!;
        yr[b] = xr[a]! + xr[a + sm]!;
        yi[b] = xi[a]! + xi[a + sm]!;
        yr[b + s] = dr * c + di * si;
        yi[b + s] = di * c - dr * si;
      }
    }
    return;
  }
  // Any other radix: its own p-point DFT, W_p^{rt} = W_N^{(rt mod p)·N/p}.
  const step = n / p;
  for (let j = 0; j < m; j++) {
    for (let q = 0; q < s; q++) {
      const a = q + s * j;
      const b = q + s * p * j;
      for (let t = 0; t < p; t++) {
        let sr = 0;
        let sIm = 0;
        for (let r = 0; r < p; r++) {
          const w = ((r * t) % p) * step;
          const c = cos[w]!;
          const si = sin[w]!;
          const x = xr[a + r * sm]!;
          const y = xi[a + r * sm]!;
          sr += x * c + y * si;
          sIm += y * c - x * si;
        }
        const w = j * t * s;
        const c = cos[w]!;
        const si = sin[w]!;
        yr[b + t * s] = sr * c + sIm * si;
        yi[b + t * s] = sIm * c - sr * si;
      }
    }
  }
}
