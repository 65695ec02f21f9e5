/**
 * shaders/factored/qr.wgsl against the CPU reference, core/linalg's
 * Householder QR (Float64), on random and adversarial factors.
 *
 * What is checked. Every R must satisfy RᵀR = FᵀF (the Gram matrix of the
 * examples: then F = Q·R for an orthonormal Q, which is all the factored
 * route needs) and be upper trapezoidal. A factor of full column rank has
 * one such R up to row signs, and Householder's sign rule fixes them, so
 * there R is also compared entry by entry with the reference; a
 * rank-deficient factor's R is not unique (the reflector of a column that
 * is zero to rounding points anywhere), so there only RᵀR is compared.
 *
 * Tolerance: 2⁻²⁰ ≈ 9.5e-7 of ‖F‖_F per entry of R and of ‖F‖_F² per
 * entry of RᵀR, i.e. 16 u (u = 2⁻²⁴). Householder in f32 is backward
 * stable, and the worst entry measured was 2.2e-7·‖F‖_F (10×32). The
 * power-of-two scaling is exact, so the same bound holds at 1e±30; a zero
 * factor gives R = 0 and scale exponent 0.
 */
import { describe, expect } from 'vitest';
import { householderQr } from '../../../core/linalg/householderQr';
import { seededRng } from '../../../core/testing/seeded';
import { readF32, uploadF32 } from '../runtime/readback';
import { gpuTest } from '../testing/gpuTest';
import { FactoredKernels, MATRIX_STATE_BYTES, SCALE_EXP_WORD, type QrJob } from './factored';
import { encodePass } from '../runtime/dispatch';
import { StagingPool } from '../runtime/pools';

const TOLERANCE = 2 ** -20;

/** A named factor: length × batch, column-major (a backend's batch × length factor). */
interface Factor {
  readonly name: string;
  readonly length: number;
  readonly batch: number;
  readonly data: Float32Array;
  /** Column rank below min(length, batch): R is checked through RᵀR only. */
  readonly deficient?: true;
}

function randomFactor(name: string, length: number, batch: number, seed: number, scale = 1): Factor {
  const rng = seededRng(seed);
  return { name, length, batch, data: Float32Array.from({ length: length * batch }, () => (rng() * 2 - 1) * scale) };
}

/** Column c of `f` replaced by column `from` (a repeated example) or by zeros (a blank one). */
function withColumn(f: Factor, c: number, from: number | 'zero'): Factor {
  const data = f.data.slice();
  for (let i = 0; i < f.length; i++) data[c * f.length + i] = from === 'zero' ? 0 : f.data[from * f.length + i]!;
  return {
    ...f,
    name: `${f.name}, column ${c} ${from === 'zero' ? 'zero' : `= column ${from}`}`,
    data,
    deficient: true,
  };
}

const FACTORS: Factor[] = [
  randomFactor('784×32 (MLP input)', 784, 32, 1),
  randomFactor('128×32 (MLP delta)', 128, 32, 2),
  randomFactor('101×13 (no multiple of anything)', 101, 13, 3),
  randomFactor('10×32 (batch above the length)', 10, 32, 4),
  randomFactor('1×5', 1, 5, 5),
  randomFactor('300×70 (three passes of 32 columns)', 300, 70, 6),
  withColumn(withColumn(randomFactor('200×16', 200, 16, 7), 5, 2), 9, 'zero'),
  (() => {
    // Rank one: every example a multiple of the first.
    const base = randomFactor('64×12 rank one', 64, 12, 8);
    const data = new Float32Array(64 * 12);
    for (let c = 0; c < 12; c++) for (let i = 0; i < 64; i++) data[c * 64 + i] = base.data[i]! * (c - 5.5);
    return { ...base, data, deficient: true };
  })(),
  { name: '50×8 zero', length: 50, batch: 8, data: new Float32Array(400), deficient: true },
  randomFactor('96×24 at 1e30', 96, 24, 9, 1e30),
  randomFactor('96×24 at 1e-30', 96, 24, 10, 1e-30),
];

describe('factored/qr.wgsl on Dawn', () => {
  gpuTest(
    'gives the Householder R of every factor, scaled by an exact power of two, in one dispatch',
    async ({ gpu }) => {
      const { device } = gpu;
      const kernels = new FactoredKernels(device);
      const jobs: QrJob[] = [];
      let work = 0;
      let r = 0;
      for (const f of FACTORS) {
        jobs.push({ workOffset: work, length: f.length, batch: f.batch, rOffset: r, state: jobs.length });
        work += f.length * f.batch;
        r += Math.min(f.length, f.batch) * f.batch;
      }
      const packed = new Float32Array(work);
      FACTORS.forEach((f, i) => packed.set(f.data, jobs[i]!.workOffset));
      const workBuffer = uploadF32(device, packed, 'FactoredTest.work');
      const rBuffer = uploadF32(device, new Float32Array(r).fill(Number.NaN), 'FactoredTest.r');
      const states = uploadF32(device, new Float32Array((jobs.length * MATRIX_STATE_BYTES) / 4), 'FactoredTest.states');
      const owned: GPUBuffer[] = [];
      const encoder = device.createCommandEncoder({ label: 'FactoredTest.encoder' });
      encodePass(encoder, 'FactoredTest.pass', [kernels.qr(owned, jobs, workBuffer, rBuffer, states)]);
      device.queue.submit([encoder.finish()]);
      const got = await readF32(device, rBuffer, r);
      const staging = new StagingPool(device, 'FactoredTest.staging');
      const exponents = new Int32Array(await staging.read(states, 0, jobs.length * MATRIX_STATE_BYTES));

      FACTORS.forEach((f, index) => {
        const job = jobs[index]!;
        const p = Math.min(f.length, f.batch);
        const reference = householderQr(f.data, f.length, f.batch).r;
        const e = exponents[index * (MATRIX_STATE_BYTES / 4) + SCALE_EXP_WORD]!;
        let norm = 0;
        let maxAbs = 0;
        for (const x of f.data) {
          norm += x * x;
          maxAbs = Math.max(maxAbs, Math.abs(x));
        }
        norm = Math.sqrt(norm);
        // The scaling puts max |F′| in [1, 2).
        if (maxAbs > 0) expect(maxAbs * 2 ** -e, f.name).toBeGreaterThanOrEqual(1);
        if (maxAbs > 0) expect(maxAbs * 2 ** -e, f.name).toBeLessThan(2);
        else expect(e, f.name).toBe(0);
        const rOf = (i: number, c: number) => got[job.rOffset + i * f.batch + c]! * 2 ** e;
        let worst = 0;
        for (let i = 0; i < p; i++) {
          for (let c = 0; c < f.batch; c++) {
            if (c < i) expect(rOf(i, c), `${f.name}: R[${i}][${c}] below the diagonal`).toBe(0);
            worst = Math.max(worst, Math.abs(rOf(i, c) - reference[i * f.batch + c]!));
          }
        }
        if (f.deficient !== true) expect(worst, f.name).toBeLessThanOrEqual(TOLERANCE * norm);
        // RᵀR = FᵀF: column c of F is example c (f.data[c·length …]).
        let worstGram = 0;
        for (let a = 0; a < f.batch; a++) {
          for (let b = a; b < f.batch; b++) {
            let rr = 0;
            for (let i = 0; i < p; i++) rr += rOf(i, a) * rOf(i, b);
            let ff = 0;
            for (let i = 0; i < f.length; i++) ff += f.data[a * f.length + i]! * f.data[b * f.length + i]!;
            worstGram = Math.max(worstGram, Math.abs(rr - ff));
          }
        }
        expect(worstGram, `${f.name}: RᵀR = FᵀF`).toBeLessThanOrEqual(TOLERANCE * norm * norm);
        const relative = (x: number, scale: number) => (scale === 0 ? '0' : (x / scale).toExponential(1));
        console.log(
          `${f.name}: max |R − R_ref| ${relative(worst, norm)}·‖F‖, ` +
            `|RᵀR − FᵀF| ${relative(worstGram, norm * norm)}·‖F‖²`,
        );
      });
      for (const buffer of [workBuffer, rBuffer, states, ...owned]) buffer.destroy();
      staging.destroy();
    },
  );
});
