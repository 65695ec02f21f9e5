/** Small pure parts of the server: the round's closing rule, checkpoints, CSV, config validation, the rate limiter. */
import { describe, expect, it } from 'vitest';
import { asModelVersion, asRunId, asWorkerId } from '../../core/protocol';
import { decodeCheckpoint, encodeCheckpoint } from '../persistence/checkpoint';
import { ProtocolFault } from '../protocol/fault';
import { encodeLayer, maxLayerBytes } from '../../core/codec';
import { computeMaxMessageBytes } from '../protocol/limits';
import { buildRoundMetrics, historyToCsv, isEvaluationRound, lastAccuracy } from './metrics';
import { createRateLimiter } from '../protocol/rateLimit';
import { OpenRound } from './round';
import { createModelLayout } from '../../core/model/layout';
import type { RoundMetrics } from '../../core/protocol';
import { DEFAULT_RUN_CONFIG } from '../../core/schema';
import { applyConfigPatch } from './runConfig';
import { decodeGradient, type SubmissionEnvelope } from '../protocol/validation';
import { SCHEMES } from '../../core/atomo';
import { QSGD_CODINGS, type QsgdCoding } from '../../core/atomo/types';

const contribution = { estimate: null, loss: 1, layerStats: [], bytesUp: 10, computeMs: 1 };
const ids = [1, 2, 3, 4].map(asWorkerId);

describe('OpenRound.canClose', () => {
  it('closes when every remaining participant reported, or at the deadline with the quorum', () => {
    const round = new OpenRound(asModelVersion(0), ids, 100, 0, 1000, { fraction: 0.5, minimum: 1 });
    round.add(ids[0]!, contribution, 1);
    expect(round.canClose()).toBe(false);
    round.deadlinePassed = true;
    expect(round.canClose()).toBe(false); // quorum is 2
    round.add(ids[1]!, contribution, 2);
    expect(round.canClose()).toBe(true);
  });

  it('never waits for workers that left', () => {
    const round = new OpenRound(asModelVersion(0), ids, 100, 0, 1000, { fraction: 1, minimum: 4 });
    round.add(ids[0]!, contribution, 1);
    for (const id of ids.slice(1)) round.drop(id);
    expect(round.canClose()).toBe(true);
    const empty = new OpenRound(asModelVersion(0), ids.slice(0, 1), 100, 0, 1000, { fraction: 1, minimum: 1 });
    empty.drop(ids[0]!);
    expect(empty.isAbandoned()).toBe(true);
  });
});

describe('checkpoint format', () => {
  it('round-trips a run exactly', () => {
    const count = createModelLayout('mlp').parameterCount;
    const params = Float32Array.from({ length: count }, (_, i) => Math.sin(i) * 1e-2);
    params[0] = 1.5;
    params[1] = 3e-8;
    const snapshot = {
      runId: asRunId('r1'),
      config: DEFAULT_RUN_CONFIG,
      status: 'running' as const,
      version: asModelVersion(7),
      params,
      velocity: Float32Array.from({ length: count }, (_, i) => Math.cos(i) * 1e-3),
      history: Array.from(
        { length: 7 },
        (_, version) => ({ version, trainLoss: 2 - version / 10 }) as unknown as RoundMetrics,
      ),
      members: [{ workerId: asWorkerId(3), slot: 0, bytesUp: 5, bytesDown: 6, rounds: 2 }],
      bytesUp: 5,
      bytesDown: 6,
    };
    const back = decodeCheckpoint(encodeCheckpoint({ snapshot, createdAt: 42 }));
    expect(back).toEqual({ snapshot, createdAt: 42 });
    expect(() => decodeCheckpoint(Buffer.from('nope'))).toThrow();
  });

  it('refuses to write, and to read, weights or momentum that are not finite', () => {
    const count = createModelLayout('mlp').parameterCount;
    const snapshot = {
      runId: asRunId('r1'),
      config: DEFAULT_RUN_CONFIG,
      status: 'running' as const,
      version: asModelVersion(0),
      params: new Float32Array(count),
      velocity: new Float32Array(count),
      history: [],
      members: [],
      bytesUp: 0,
      bytesDown: 0,
    };
    const good = encodeCheckpoint({ snapshot, createdAt: 1 });
    const velocity = new Float32Array(count);
    velocity[9] = Number.POSITIVE_INFINITY;
    expect(() => encodeCheckpoint({ snapshot: { ...snapshot, velocity }, createdAt: 1 })).toThrow(
      /non-finite momentum \(parameter 9\)/,
    );
    // The same damage written by something else is refused on load.
    const poisoned = Buffer.from(good);
    poisoned.writeFloatLE(Number.NaN, poisoned.length - 4 * count + 4 * 5);
    expect(() => decodeCheckpoint(poisoned)).toThrow(/momentum are not finite at parameter 5/);
    expect(() => decodeCheckpoint(good.subarray(0, good.length - 4))).toThrow(/weight bytes/);
  });
});

describe('limits', () => {
  it('admits the largest honest submission and caps each layer by its scheme', () => {
    expect(computeMaxMessageBytes()).toBeGreaterThanOrEqual(784 * 128 * 9);
    expect(maxLayerBytes('none', [784, 128], 1)).toBe(12 + 4 * 784 * 128);
    expect(maxLayerBytes('terngrad', [4, 4], 1)).toBe(12 + 4 + 4);
  });
});

describe('config', () => {
  it('fills the scheme default budget and refuses bad fields', () => {
    expect(applyConfigPatch(DEFAULT_RUN_CONFIG, { scheme: 'atomo-entry' }).budget).toBe(1024);
    expect(() => applyConfigPatch(DEFAULT_RUN_CONFIG, { batchSize: 0 })).toThrow(ProtocolFault);
    expect(() => applyConfigPatch(DEFAULT_RUN_CONFIG, { levels: 65_536 })).toThrow(ProtocolFault);
    expect(() => applyConfigPatch(DEFAULT_RUN_CONFIG, { nope: 1 })).toThrow(/unknown configuration field/);
    expect(() => applyConfigPatch(DEFAULT_RUN_CONFIG, { split: { kind: 'dirichlet', alpha: -1 } })).toThrow(/alpha/);
  });
});

describe('metrics export', () => {
  it('writes one CSV row per round', () => {
    const round = (version: number, layers: RoundMetrics['layers'], testAccuracy: number | null): RoundMetrics => ({
      runId: asRunId('csv'),
      version: asModelVersion(version),
      closedAt: 1000 + version,
      participants: 3,
      contributors: 2,
      trainLoss: 2.5 - version,
      testLoss: testAccuracy === null ? null : 0.7,
      testAccuracy,
      bytesUp: 100 * (version + 1),
      bytesDown: 50,
      cumulativeBytesUp: 100,
      cumulativeBytesDown: 50,
      traffic: { gradientUp: 90, controlUp: 10, modelDown: 40, controlDown: 10 },
      cumulativeTraffic: { gradientUp: 180, controlUp: 20, modelDown: 80, controlDown: 20 },
      layers,
      workers: [],
      durations: { totalMs: 12, collectMs: 8, decodeMs: 2, updateMs: 1, evalMs: 1 },
    });
    const csv = historyToCsv([
      round(0, [{ closedForm: 0.5, realised: 0.25, gradientNormSq: 4, indicator: 0.75, bytes: 120 }], null),
      round(
        1,
        [
          { closedForm: 0.5, realised: 0.25, gradientNormSq: 4 },
          { closedForm: 1, realised: 2, gradientNormSq: 3 },
        ],
        0.875,
      ),
    ]);
    expect(csv.endsWith('\n')).toBe(true);
    const [header, ...rows] = csv
      .trimEnd()
      .split('\n')
      .map((line) => line.split(','));
    expect(rows).toHaveLength(2);
    // Columns for the most layers any round has; a round with fewer leaves its cells empty.
    expect(header!.slice(-10)).toEqual([
      'layer0_closedForm',
      'layer0_realised',
      'layer0_gradientNormSq',
      'layer0_indicator',
      'layer0_bytes',
      'layer1_closedForm',
      'layer1_realised',
      'layer1_gradientNormSq',
      'layer1_indicator',
      'layer1_bytes',
    ]);
    for (const row of rows) expect(row).toHaveLength(header!.length);
    const [round0, round1] = rows.map((row) => Object.fromEntries(header!.map((column, i) => [column, row[i]])));
    // The indicator and bytes, where the round has them; older records without them leave the cells empty.
    expect(round0).toMatchObject({
      version: '0',
      testAccuracy: '',
      cumulativeWireTotal: '300',
      layer1_closedForm: '',
      layer0_indicator: '0.75',
      layer0_bytes: '120',
    });
    expect(round1).toMatchObject({
      version: '1',
      trainLoss: '1.5',
      testAccuracy: '0.875',
      bytesUp: '200',
      layer1_realised: '2',
      layer0_indicator: '',
    });
  });
});

describe('evaluation schedule', () => {
  const v = asModelVersion;
  it('evaluates every evalEvery rounds and at the last, and every round just below a target', () => {
    const config = { evalEvery: 5, maxRounds: 12 };
    expect([...Array(13).keys()].filter((t) => isEvaluationRound(v(t), config, 0.5))).toEqual([0, 5, 10, 12]);
    const near = { ...config, evalNear: { targets: [0.85, 0.9], within: 0.03 } };
    // Within 3 points below 85% or 90%: every round; at or above a target, or further below, not.
    for (const accuracy of [0.825, 0.849, 0.87, 0.899]) expect(isEvaluationRound(v(7), near, accuracy)).toBe(true);
    for (const accuracy of [0.5, 0.819, 0.85, 0.86, 0.9, 0.95])
      expect(isEvaluationRound(v(7), near, accuracy)).toBe(false);
    expect(isEvaluationRound(v(7), near, null)).toBe(false);
    expect(isEvaluationRound(v(10), near, 0.5)).toBe(true);
  });

  it('reads the last evaluated accuracy of a history', () => {
    const round = (testAccuracy: number | null) => ({ testAccuracy }) as RoundMetrics;
    expect(lastAccuracy([])).toBeNull();
    expect(lastAccuracy([round(null)])).toBeNull();
    expect(lastAccuracy([round(0.4), round(0.7), round(null), round(null)])).toBe(0.7);
  });
});

describe('round metrics per layer', () => {
  it(
    'average the indicator over the workers that measured it, the bytes over all, ' +
      'and count how each layer travelled',
    () => {
      const ids = [1, 2, 3].map(asWorkerId);
      const round = new OpenRound(asModelVersion(4), ids, 100, 0, 1000, { fraction: 1, minimum: 1 });
      const stats = (indicator?: number) => ({
        closedForm: 1,
        realised: 2,
        gradientNormSq: 3,
        ...(indicator === undefined ? {} : { indicator }),
      });
      const contribution = (
        indicators: (number | undefined)[],
        layerBytes: number[],
        sentAs: ('spectral' | 'entry' | 'dense' | null)[],
      ) => ({
        estimate: null,
        loss: 1,
        layerStats: indicators.map(stats),
        bytesUp: 1,
        computeMs: 1,
        layerBytes,
        sentAs,
      });
      round.add(ids[0]!, contribution([0.5, undefined], [100, 10], ['spectral', 'dense']), 1);
      round.add(ids[1]!, contribution([0.7, undefined], [300, 10], ['entry', 'dense']), 2);
      round.add(ids[2]!, contribution([undefined, undefined], [200, 20], ['spectral', null]), 3);
      const outcome = {
        runId: asRunId('r'),
        closedAt: 9,
        layerCount: 2,
        evaluation: null,
        cumulativeBytesUp: 0,
        cumulativeBytesDown: 0,
        updateMs: 0,
        combineMs: 0,
        stepMs: 0,
        evalMs: 0,
      };
      const traffic = { gradientUp: 0, controlUp: 0, modelDown: 0, controlDown: 0 };
      const { layers } = buildRoundMetrics(round, { ...outcome, traffic, cumulativeTraffic: traffic });
      expect(layers[0]).toEqual({
        closedForm: 1,
        realised: 2,
        gradientNormSq: 3,
        indicator: 0.6,
        bytes: 200,
        sentAs: { spectral: 2, entry: 1 },
      });
      // Nobody measured layer 1's indicator this round: null, not 0.
      expect(layers[1]).toMatchObject({ indicator: null, bytes: 40 / 3, sentAs: { dense: 2 } });
    },
  );
});

describe('rate limiter', () => {
  it('allows a burst, then the steady rate', () => {
    let t = 0;
    const allow = createRateLimiter({ perSecond: 10, burst: 3 }, () => t);
    expect([allow(), allow(), allow(), allow()]).toEqual([true, true, true, false]);
    t = 100;
    expect(allow()).toBe(true);
  });
});

describe('dormant members', () => {
  const ids = [1, 2, 3, 4].map(asWorkerId);
  const contribution = { estimate: null, loss: 1, layerStats: [], bytesUp: 1, computeMs: 1 };

  it('a member that stopped submitting is not waited for and does not count toward the quorum', () => {
    const round = new OpenRound(asModelVersion(0), ids, 100, 0, 1000, { fraction: 1, minimum: 1 }, new Set([ids[3]!]));
    for (const id of ids.slice(0, 3)) round.add(id, contribution, 1);
    // Without dormancy the round would wait for worker 4 until the deadline, and the quorum of 4 would never be met.
    expect(round.canClose()).toBe(true);
    const waiting = new OpenRound(asModelVersion(0), ids, 100, 0, 1000, { fraction: 1, minimum: 1 });
    for (const id of ids.slice(0, 3)) waiting.add(id, contribution, 1);
    expect(waiting.canClose()).toBe(false);
    waiting.deadlinePassed = true;
    expect(waiting.canClose()).toBe(false);
  });

  it('a dormant member that submits again counts', () => {
    const round = new OpenRound(
      asModelVersion(0),
      ids.slice(0, 2),
      100,
      0,
      1000,
      { fraction: 1, minimum: 1 },
      new Set([ids[1]!]),
    );
    round.add(ids[1]!, contribution, 1);
    expect(round.canClose()).toBe(false); // worker 1 is awake and still expected
    round.add(ids[0]!, contribution, 2);
    expect(round.canClose()).toBe(true);
    expect(round.orderedContributors()).toEqual([ids[0], ids[1]]);
  });
});

describe('decodeGradient: QSGD coding', () => {
  it('refuses layers in another QSGD coding than the run’s, and bounds each by its coding’s largest message', () => {
    const layout = createModelLayout('mlp');
    const stats = { closedForm: 0, realised: 0, gradientNormSq: 0 };
    const submission = (qsgdCoding: QsgdCoding): SubmissionEnvelope => ({
      runId: asRunId('r'),
      workerId: asWorkerId(1),
      version: asModelVersion(0),
      loss: 1,
      computeMs: 1,
      layerStats: layout.tensors.map(() => stats),
      layers: layout.tensors.map((tensor, layer) => {
        // Sparse, so that either coding's message is within the other's largest.
        const grad = Float32Array.from({ length: tensor.size }, (_, i) => (i % 7 === 0 ? Math.sin(i + layer) : 0));
        const options = { levels: 3, bucketSize: 512, qsgdCoding };
        const stream = { seed: 1, worker: 1, round: 0, layer };
        return encodeLayer(SCHEMES.qsgd.compress(grad, tensor.shape, options, stream).sample, layer);
      }),
    });
    for (const runs of QSGD_CODINGS) {
      const config = { ...DEFAULT_RUN_CONFIG, scheme: 'qsgd', levels: 3, bucketSize: 512, qsgdCoding: runs } as const;
      for (const sent of QSGD_CODINGS) {
        if (sent === runs)
          expect(decodeGradient(submission(sent), layout, config).estimate.stats.segmentMax).toHaveLength(4);
        else expect(() => decodeGradient(submission(sent), layout, config)).toThrow(new RegExp(`${sent} coding`));
      }
      const limit = maxLayerBytes('qsgd', layout.tensors[0]!.shape, 3, 512, runs);
      const tooLarge = {
        ...submission(runs),
        layers: [new Uint8Array(limit + 1), ...submission(runs).layers.slice(1)],
      };
      expect(() => decodeGradient(tooLarge, layout, config)).toThrow(/payload|never needs more than/);
    }
  });
});
