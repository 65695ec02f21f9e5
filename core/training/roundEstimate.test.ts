import { describe, expect, it } from 'vitest';
import { aggregate, estimateStats } from '../aggregation';
import { SCHEMES } from '../atomo/schemes';
import type { SchemeName } from '../atomo/types';
import { encodeForWire, encodeLayer } from '../codec';
import { mlpLayout, type ModelLayout } from '../model/layout';
import type { AggregationRule } from '../schema/runConfig';
import { uniformArray } from '../testing/seeded';
import {
  aggregateEstimates,
  decodeContribution,
  EstimateOverflow,
  flattenContribution,
  scaleContribution,
} from './modelUpdate';
import { RoundEstimate } from './roundEstimate';

const layout: ModelLayout = mlpLayout({ inputSize: 20, hiddenSize: 8, classCount: 3 });
const segments = layout.tensors.map((t) => t.offset);

/**
 * One worker's encoded gradient under `scheme`: a seeded uniform gradient, compressed with budget 2 (atomo-auto: 200
 * bytes a layer).
 */
function encoded(scheme: SchemeName, seed: number): Uint8Array[] {
  const g = uniformArray(layout.parameterCount, seed);
  return layout.tensors.map((tensor, layer) => {
    const { sample } = SCHEMES[scheme].compress(
      g.subarray(tensor.offset, tensor.offset + tensor.size),
      tensor.shape,
      { budget: 2, levels: 3, byteBudget: 200 },
      { seed, worker: seed, round: 0, layer },
    );
    return encodeForWire(sample, layer);
  });
}

/** The dense path: reconstruct, scale, flatten. */
function denseEstimate(layers: readonly Uint8Array[], multiplier: number): Float32Array {
  const estimates = decodeContribution(layout, layers);
  scaleContribution(estimates, multiplier);
  return flattenContribution(layout, estimates);
}

const bits = (x: Float32Array) => [...new Uint32Array(x.buffer, x.byteOffset, x.length)];

const SCHEMES_TESTED: readonly SchemeName[] = ['atomo-svd', 'powersgd', 'atomo-auto', 'none', 'atomo-entry', 'qsgd'];
const RULES: readonly AggregationRule[] = [
  { kind: 'mean' },
  // k = 0.5 clips every estimate above half the median norm: the weighted terms are exercised.
  { kind: 'norm-bound', k: 0.5 },
  { kind: 'norm-bound', k: 3 },
  { kind: 'median' },
  { kind: 'trimmed-mean', trim: 0.2 },
];
// An attacker's multipliers beside honest ones.
const MULTIPLIERS = [1, 1, -3, 1, 2.5, 1, 1];

describe('a contribution kept for the round sum (RoundEstimate)', () => {
  for (const scheme of SCHEMES_TESTED) {
    const contributions = MULTIPLIERS.map((m, i) => ({ layers: encoded(scheme, 10 + i), multiplier: m }));

    it(`${scheme}: its dense form and statistics are those of the reconstructed, scaled estimate, bit for bit`, () => {
      for (const { layers, multiplier } of contributions) {
        const kept = RoundEstimate.decode(layout, layers, multiplier);
        const dense = denseEstimate(layers, multiplier);
        expect(bits(kept.dense())).toEqual(bits(dense));
        expect(kept.stats).toEqual(estimateStats(dense, segments));
      }
    });

    for (const rule of RULES) {
      const name = `${scheme}, ${rule.kind}${'k' in rule ? ` k=${rule.k}` : ''}`;
      it(`${name}: the same aggregate as the dense estimates`, () => {
        const kept = contributions.map(({ layers, multiplier }) => RoundEstimate.decode(layout, layers, multiplier));
        const dense = contributions.map(({ layers, multiplier }) => denseEstimate(layers, multiplier));
        const expected = aggregate(rule, dense, layout.parameterCount, segments);
        const got = aggregateEstimates(layout, rule, kept);
        expect(bits(got.value)).toEqual(bits(expected.value));
        expect({ clipped: got.clipped, dropped: got.dropped }).toEqual({
          clipped: expected.clipped,
          dropped: expected.dropped,
        });
      });
    }
  }

  it('the clipping rule really clips (so the weighted terms above are compared)', () => {
    const kept = MULTIPLIERS.map((m, i) => RoundEstimate.decode(layout, encoded('atomo-svd', 10 + i), m));
    expect(aggregateEstimates(layout, { kind: 'norm-bound', k: 0.5 }, kept).clipped).toBeGreaterThan(0);
  });

  it('refuses an estimate that overflows float32 at the entry decodeContribution names', () => {
    const layers = encoded('atomo-svd', 3);
    const [rows, cols] = layout.tensors[0]!.shape;
    const huge = (n: number) => new Float32Array(n).fill(3e19);
    layers[0] = encodeLayer(
      { scheme: 'atomo-svd', shape: [rows, cols], count: 1, u: huge(rows), v: huge(cols), scales: huge(1) },
      0,
    );
    const caught = (f: () => unknown) => {
      try {
        f();
      } catch (error) {
        return error;
      }
      return null;
    };
    const dense = caught(() => decodeContribution(layout, layers));
    const kept = caught(() => RoundEstimate.decode(layout, layers));
    expect(dense).toBeInstanceOf(EstimateOverflow);
    expect(kept).toEqual(dense);
    expect((kept as EstimateOverflow).layer).toBe(0);
  });
});
