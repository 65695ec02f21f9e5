/**
 * The GPU water-filling of entry-wise ATOMO (entry.ts,
 * shaders/entry/waterfill.wgsl) against the CPU's exact sorted
 * water-filling (core/atomo/waterfilling.ts) on random, tie-heavy,
 * zero-containing, wide-range and s ≥ #non-zero layers: pᵢ within
 * ENTRY_PROBABILITY_TOLERANCE relative, Σ p = min(s, #non-zero) to the same
 * tolerance, p ∈ [0, 1], zeros get 0 and s ≥ #non-zero gives every non-zero
 * entry p = 1. Unbiasedness and the wire format: gpuCompression.gpu.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { samplingProbabilities } from '../../../core/atomo';
import { seededRng as uniforms } from '../../../core/testing/seeded';
import { uploadF32 } from '../runtime/readback';
import { gpuTest } from '../testing/gpuTest';
import { ENTRY_PROBABILITY_TOLERANCE, GpuEntryCompressor, snapToTau } from './entryCompressor';

function normals(n: number, seed: number): Float32Array {
  const u = uniforms(seed);
  return Float32Array.from({ length: n }, () => Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u()));
}

interface Case {
  readonly name: string;
  readonly g: Float32Array;
  readonly shape: readonly [number, number];
}

const rng = uniforms(11);
const pick = <T>(values: readonly T[]): T => values[Math.floor(rng() * values.length)]!;
const CASES: readonly Case[] = [
  { name: 'random normal', g: normals(1000, 1), shape: [40, 25] },
  {
    name: 'random, wide range',
    g: Float32Array.from({ length: 777 }, () => (rng() < 0.5 ? -1 : 1) * 10 ** (-20 + 23 * rng())),
    shape: [777, 1],
  },
  {
    name: 'tie-heavy',
    g: Float32Array.from({ length: 512 }, () => pick([-4, -2, -1, -0.5, 0.5, 1, 2, 4])),
    shape: [16, 32],
  },
  {
    name: 'ties at the saturation level',
    g: Float32Array.from({ length: 508 }, (_, i) => (i % 64 === 0 ? 100 : i % 2 === 0 ? 0.01 : -0.01)),
    shape: [4, 127],
  },
  { name: 'one dominant entry', g: normals(500, 4).map((v, i) => (i === 123 ? -1e4 : v)), shape: [25, 20] },
  { name: 'all equal', g: new Float32Array(64).fill(-0.25), shape: [8, 8] },
  { name: 'mostly zeros', g: normals(600, 2).map((v, i) => (i % 3 === 0 ? v : 0)), shape: [20, 30] },
  { name: 'few non-zeros', g: normals(200, 3).map((v, i) => (i % 4 === 1 ? v : 0)), shape: [200, 1] },
  { name: 'all zeros', g: new Float32Array(32), shape: [4, 8] },
  { name: 'single entry', g: Float32Array.of(-3), shape: [1, 1] },
];

/** Every case in one flat buffer, as a gradient's tensors are. */
function packed(cases: readonly Case[]): {
  flat: Float32Array;
  tensors: { offset: number; shape: readonly [number, number] }[];
} {
  const flat = new Float32Array(7 + cases.reduce((sum, c) => sum + c.g.length, 0));
  const tensors: { offset: number; shape: readonly [number, number] }[] = [];
  let offset = 7; // unaligned on purpose: tensors sit anywhere in the gradient
  for (const c of cases) {
    flat.set(c.g, offset);
    tensors.push({ offset, shape: c.shape });
    offset += c.g.length;
  }
  return { flat, tensors };
}

describe('GPU entry-wise water-filling', () => {
  // 64 invocations per workgroup is what SwiftShader gets, 256 what a GPU gets: both run here
  // (256 on fewer budgets: 4 invocation groups per barrier make it slow on SwiftShader).
  const RUNS: [number, 64 | 256][] = [
    ...[1.5, 10, 50, 260, 1e9, Infinity].map((budget): [number, 64 | 256] => [budget, 64]),
    ...[1.5, 50, Infinity].map((budget): [number, 64 | 256] => [budget, 256]),
  ];
  gpuTest.for(RUNS)(
    'matches the CPU water-filling within the tolerance at s = %d, %d invocations',
    async ([budget, groupSize], { gpu }) => {
      const { flat, tensors } = packed(CASES);
      const buffer = uploadF32(gpu.device, flat, 'EntryTest.gradient');
      const entry = new GpuEntryCompressor(gpu.device, { workgroupSize: groupSize });
      try {
        const layers = await entry.readProbabilities(tensors, buffer, budget);
        let worstOverall = 0;
        CASES.forEach(({ name, g }, index) => {
          const { probabilities: p, steps } = layers[index]!;
          const want = samplingProbabilities(g, budget);
          const nonZero = g.filter((v) => v !== 0).length;
          const target = Math.min(budget, nonZero);
          // Collect the violations and assert once: thousands of expect calls cost seconds.
          const wrong: string[] = [];
          let sum = 0;
          let worst = 0;
          for (let i = 0; i < g.length; i++) {
            const got = p[i]!;
            const cpu = want[i]!;
            sum += got;
            if (!(got >= 0 && got <= 1)) wrong.push(`p[${i}] = ${got} outside [0, 1]`);
            if ((g[i] === 0) !== (got === 0)) wrong.push(`p[${i}] = ${got} for g = ${g[i]}`);
            const exact = budget >= nonZero && g[i] !== 0;
            if (exact && got !== 1) wrong.push(`p[${i}] = ${got}, not 1 with s ≥ #non-zero`);
            if (cpu > 0) worst = Math.max(worst, Math.abs(got - cpu) / cpu);
          }
          expect(wrong, name).toEqual([]);
          expect(worst, name).toBeLessThanOrEqual(ENTRY_PROBABILITY_TOLERANCE);
          worstOverall = Math.max(worstOverall, worst);
          expect(Math.abs(sum - target), `${name} Σp = ${sum}`).toBeLessThanOrEqual(
            ENTRY_PROBABILITY_TOLERANCE * target,
          );
          expect(steps, name).toBeLessThanOrEqual(32);
        });
        console.log(
          `s = ${budget}, ${groupSize} invocations: worst relative |p − p_cpu| ${worstOverall.toExponential(2)}`,
        );
      } finally {
        entry.destroy();
        buffer.destroy();
      }
    },
  );

  gpuTest.for([64, 256] as const)(
    'holds Σp = s on a 784×128 layer (the MLP first layer), %d invocations',
    async (groupSize, { gpu }) => {
      const g = normals(784 * 128, 5).map((v, i) => (i % 7 === 0 ? 0 : v * (1 + (i % 13))));
      const buffer = uploadF32(gpu.device, g, 'EntryTest.large');
      const entry = new GpuEntryCompressor(gpu.device, { workgroupSize: groupSize });
      try {
        // s = 2: nothing saturates (no search); 10⁴ and 5·10⁴: the bisection on 10⁵ entries.
        for (const budget of [2, 10_000, 50_000]) {
          const [layer] = await entry.readProbabilities([{ offset: 0, shape: [784, 128] }], buffer, budget);
          const want = samplingProbabilities(g, budget);
          let sum = 0;
          let worst = 0;
          for (let i = 0; i < g.length; i++) {
            const got = layer!.probabilities[i]!;
            sum += got;
            if (want[i]! > 0) worst = Math.max(worst, Math.abs(got - want[i]!) / want[i]!);
            else if (got !== 0) worst = Infinity;
          }
          expect(Math.abs(sum - budget) / budget, `s = ${budget}`).toBeLessThanOrEqual(ENTRY_PROBABILITY_TOLERANCE);
          expect(worst, `s = ${budget}`).toBeLessThanOrEqual(ENTRY_PROBABILITY_TOLERANCE);
          expect(layer!.steps > 0, `s = ${budget}: searched`).toBe(budget > 2);
          console.log(
            `784×128, ${groupSize} invocations, s = ${budget}: Σp − s ${(sum - budget).toExponential(2)}, ` +
              `worst relative |p − p_cpu| ${worst.toExponential(2)}, ${layer!.steps} steps`,
          );
        }
      } finally {
        entry.destroy();
        buffer.destroy();
      }
    },
  );
});

describe('snapToTau', () => {
  it('makes values within 8 ulp of τ exactly ±τ (so the wire codes them as signs) and leaves the others', () => {
    const tau = Math.fround(0.3);
    const ulp = tau * 2 ** -23;
    const values = Float32Array.of(tau + 2 * ulp, -(tau - 3 * ulp), tau * 1.001, -0.5, tau, -tau);
    snapToTau(values, tau);
    expect([...values]).toEqual([tau, -tau, Math.fround(tau * 1.001), -0.5, tau, -tau]);
  });
});
