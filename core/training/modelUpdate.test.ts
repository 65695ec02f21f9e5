import { describe, expect, it } from 'vitest';
import { SCHEMES } from '../atomo/schemes';
import type { SchemeName } from '../atomo/types';
import { encodeForWire } from '../codec';
import { mlpLayout, type ModelLayout } from '../model/layout';
import { sgdMomentumStep } from '../model/optimiser';
import { uniformArray } from '../testing/seeded';
import { aggregate } from '../aggregation';
import {
  aggregateContributions,
  applyDownlink,
  compressUpdate,
  decodeContribution,
  flattenContribution,
  modelHash,
  scaleContribution,
  stepModel,
  UpdateRefused,
  type ModelState,
} from './modelUpdate';

// A small MLP (20-8-3) keeps the Monte-Carlo loops quick; the maths does not depend on the size.
const layout: ModelLayout = mlpLayout({ inputSize: 20, hiddenSize: 8, classCount: 3 });
const n = layout.parameterCount;

/** A low-rank update per weight matrix (as minibatch gradients are) plus dense biases. */
function lowRankGradient(seed: number, rank = 2): Float32Array {
  const out = new Float32Array(n);
  layout.tensors.forEach((tensor, t) => {
    const [rows, cols] = tensor.shape;
    const a = uniformArray(rows * rank, seed * 31 + t);
    const b = uniformArray(cols * rank, seed * 37 + t + 100);
    for (let i = 0; i < rows; i++)
      for (let j = 0; j < cols; j++) {
        let x = 0;
        for (let k = 0; k < rank; k++) x += a[i * rank + k]! * b[j * rank + k]!;
        out[tensor.offset + i * cols + j] = x;
      }
  });
  return out;
}

/** One worker's encoded contribution under `scheme`. */
function contribution(scheme: SchemeName, seed: number, budget = 2): Uint8Array[] {
  const g = lowRankGradient(seed);
  return layout.tensors.map((tensor, layer) => {
    const values = g.subarray(tensor.offset, tensor.offset + tensor.size);
    const { sample } = SCHEMES[scheme].compress(
      values,
      tensor.shape,
      { budget, levels: 3 },
      { seed, worker: seed, round: 0, layer },
    );
    return encodeForWire(sample, layer);
  });
}

const start: ModelState = { params: uniformArray(n, 1), velocity: uniformArray(n, 2).map((x) => x * 0.01) };
const rule = { aggregation: { kind: 'norm-bound', k: 3 } as const, learningRate: 0.1, momentum: 0.9 };

describe('the round update both sides apply', () => {
  it('is the aggregate of the decoded estimates followed by one SGD-with-momentum step', () => {
    const estimates = [1, 2, 3].map((w) =>
      flattenContribution(layout, decodeContribution(layout, contribution('atomo-svd', w))),
    );
    const update = aggregateContributions(layout, rule.aggregation, estimates).value;
    const state = stepModel(start, update, rule.learningRate, rule.momentum);
    const expected = aggregate(
      rule.aggregation,
      estimates,
      n,
      layout.tensors.map((t) => t.offset),
    ).value;
    expect(update).toEqual(expected);
    const params = start.params.slice();
    const velocity = start.velocity.slice();
    sgdMomentumStep(params, velocity, expected, 0.1, 0.9);
    expect(state.params).toEqual(params);
    expect(state.velocity).toEqual(velocity);
    // The input state is left as it was.
    expect(start.params).toEqual(uniformArray(n, 1));
  });

  it('refuses a non-finite aggregate and applies nothing', () => {
    const bad = new Float32Array(n);
    bad[5] = Infinity;
    expect(() => stepModel(start, bad, 0.1, 0.9)).toThrow(UpdateRefused);
    const huge = new Float32Array(n).fill(3e38);
    const fast = { params: start.params, velocity: new Float32Array(n).fill(3e38) };
    expect(() => stepModel(fast, huge, 1, 0.9)).toThrow(/momentum overflows/);
  });

  for (const scheme of ['atomo-svd', 'atomo-entry', 'qsgd', 'terngrad', 'atomo-dct', 'powersgd', 'none'] as const) {
    it(`relay: a replica stepped from the forwarded ${scheme} bytes is bit-identical to the server's model`, () => {
      const messages = [4, 5, 6].map((w) => contribution(scheme, w));
      const multipliers = [1, -10, 1]; // the middle worker is the classroom's sign-flip attacker
      // The server: decodes each message on arrival (its validation path), scales, then steps.
      const server = messages.map((layers, w) => {
        const estimates = decodeContribution(layout, layers, () => undefined);
        scaleContribution(estimates, multipliers[w]!);
        return flattenContribution(layout, estimates);
      });
      const serverState = stepModel(
        start,
        aggregateContributions(layout, rule.aggregation, server).value,
        rule.learningRate,
        rule.momentum,
      );
      const replica = applyDownlink(
        layout,
        start,
        { kind: 'relay', contributions: messages.map((layers, w) => ({ layers, multiplier: multipliers[w]! })) },
        rule,
      );
      expect(replica.params).toEqual(serverState.params);
      expect(replica.velocity).toEqual(serverState.velocity);
      expect(modelHash(replica)).toBe(modelHash(serverState));
    });
  }

  it('atomo: the server applies exactly what a replica decodes from the bytes it sent', () => {
    const mean = lowRankGradient(9, 4);
    const sent = compressUpdate(layout, mean, 2, 1, 7);
    const serverState = stepModel(start, sent.estimate, 0.1, 0.9);
    const replica = applyDownlink(layout, start, { kind: 'atomo', layers: sent.layers }, rule);
    expect(modelHash(replica)).toBe(modelHash(serverState));
    expect(replica.params).toEqual(serverState.params);
    // The update was really compressed: rank-4 weights at s = 2 lose something, the biases (one atom) nothing.
    const weights = layout.tensors.filter((t) => t.role === 'weight').map((t) => layout.tensors.indexOf(t));
    expect(weights.some((l) => sent.stats[l]!.closedForm > 0)).toBe(true);
    for (const [l, tensor] of layout.tensors.entries())
      if (tensor.role === 'bias') expect(sent.stats[l]!.closedForm).toBe(0);
  });

  // 5 standard errors per coordinate (all ~300 pass with probability ≈ 0.9998 under the CLT), after
  // allowing 1e-6·‖u‖∞ for float32 rounding of what is sent and for the SVD's dropped float32-noise
  // directions (≈ 1e-7 relative here); a 2% bias in the scales fails at once.
  it('atomo: the compressed update is unbiased and its variance is the closed form (2,000 seeds, 5σ)', () => {
    const mean = lowRankGradient(11, 4);
    const seeds = 2000;
    const sum = new Float64Array(n);
    const sumSq = new Float64Array(n);
    let realised = 0;
    let realisedSq = 0;
    let closedForm = 0;
    for (let seed = 0; seed < seeds; seed++) {
      const sent = compressUpdate(layout, mean, 2, seed, 0);
      for (let i = 0; i < n; i++) {
        sum[i]! += sent.estimate[i]!;
        sumSq[i]! += sent.estimate[i]! ** 2;
      }
      const r = sent.stats.reduce((a, s) => a + s.realised, 0);
      realised += r;
      realisedSq += r * r;
      closedForm = sent.stats.reduce((a, s) => a + s.closedForm, 0);
    }
    const rounding = 1e-6 * mean.reduce((a, x) => Math.max(a, Math.abs(x)), 0);
    let worst = 0;
    for (let i = 0; i < n; i++) {
      const m = sum[i]! / seeds;
      const se = Math.sqrt(Math.max(sumSq[i]! / seeds - m * m, 0) / seeds);
      const off = Math.max(0, Math.abs(m - mean[i]!) - rounding);
      // A coordinate with no spread is sent exactly: it must be within the rounding allowance.
      worst = Math.max(worst, off === 0 ? 0 : se > 0 ? off / se : Infinity);
    }
    expect(worst).toBeLessThan(5);
    const meanRealised = realised / seeds;
    const sdRealised = Math.sqrt((realisedSq / seeds - meanRealised ** 2) / seeds);
    // The closed form does not depend on the seed (same update, same probabilities).
    expect(Math.abs(meanRealised - closedForm)).toBeLessThan(5 * sdRealised);
  });

  it('hashes equal states alike and tells a one-bit difference apart, in the weights or the momentum', () => {
    const copy = { params: start.params.slice(), velocity: start.velocity.slice() };
    expect(modelHash(copy)).toBe(modelHash(start));
    expect(modelHash(start)).toMatch(/^[0-9a-f]{16}$/);
    for (const which of ['params', 'velocity'] as const) {
      const flipped = { params: start.params.slice(), velocity: start.velocity.slice() };
      const words = new Uint32Array(flipped[which].buffer);
      words[17]! ^= 1;
      expect(modelHash(flipped)).not.toBe(modelHash(start));
    }
    // Swapping the two halves is not the same state either.
    expect(modelHash({ params: start.velocity, velocity: start.params })).not.toBe(modelHash(start));
  });
});
