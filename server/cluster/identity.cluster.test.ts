/**
 * The cluster computes what one process computes (docs/scaling.md,
 * "Hierarchical aggregation"): six workers send the same fixed gradients to
 * one process and to three cluster processes (two workers each, so the
 * leader adds three partial sums), and after every round the weights are
 * the same bits, under each aggregation rule, with one worker sending a
 * gradient 1000 times too large so the norm bound clips and the median
 * rules discard.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeLayer } from '../../core/codec';
import type { ModelLayout } from '../../core/model/layout';
import type { AggregationRule } from '../../core/schema/runConfig';
import type { GradientSubmission, RunConfigPatch, RunId } from '../../core/protocol';
import { seededRng } from '../../core/testing/seeded';
import { startTestCluster, type TestCluster } from '../testing/cluster';
import { removeDataDir, startServer, waitFor, type TestServer } from '../testing/harness';
import { joinRaw, type RawWorker } from '../testing/rawWorker';

const WORKERS = 6;
const ROUNDS = 3;
/** This project's test port block (3650-3699) for the cluster tests' Redis. */
const REDIS_PORT = 3670;

/** Worker w's gradient for version v: fixed numbers, worker 5 a thousand times too large. */
function fixedGradient(layout: ModelLayout, w: number, v: number, runId: RunId, workerId: number): GradientSubmission {
  const rng = seededRng(1 + 1000 * v + w);
  const scale = w === WORKERS - 1 ? 1000 : 1;
  const layers = layout.tensors.map((t) => Float32Array.from({ length: t.size }, () => scale * (rng() - 0.5) * 0.02));
  // Where grouping matters: in float64, one process sums 2^60 + 1 − 2^60 + 1 + 1 + 1 = 3, while per-process
  // partial sums (w mod 3) give (2^60 + 1) + (1 + 1) + (−2^60 + 1) = 0. The exact sum gives one answer for both.
  layers[0]![0] = [2 ** 60, 1, -(2 ** 60), 1, 1, 1][w]!;
  return {
    runId,
    workerId: workerId as GradientSubmission['workerId'],
    version: v as GradientSubmission['version'],
    layers: layout.tensors.map((t, layer) =>
      encodeLayer({ scheme: 'none', shape: t.shape, values: layers[layer]! }, layer),
    ),
    loss: 1 + w,
    layerStats: layout.tensors.map(() => ({ closedForm: 0, realised: 0, gradientNormSq: 1 })),
    computeMs: 1,
  };
}

const bytes = (x: Float32Array) => Buffer.from(x.buffer, x.byteOffset, x.byteLength);

describe('one process and a cluster of three: the same model, bit for bit', () => {
  let single: TestServer;
  let cluster: TestCluster;
  beforeAll(async () => {
    single = await startServer({ defaultRun: false });
    cluster = await startTestCluster(3, REDIS_PORT, 'identity-test');
  });
  afterAll(async () => {
    await cluster?.close();
    await single?.close();
    if (single) removeDataDir(single.dataDir);
  });

  const rules: [string, AggregationRule][] = [
    ['mean', { kind: 'mean' }],
    ['norm-bound', { kind: 'norm-bound', k: 3 }],
    ['median', { kind: 'median' }],
    ['trimmed-mean', { kind: 'trimmed-mean', trim: 0.2 }],
  ];
  it.each(rules)('%s, %#', async (_name, aggregation) => {
    const patch: RunConfigPatch = {
      scheme: 'none',
      learningRate: 0.1,
      momentum: 0.9,
      seed: 3,
      maxRounds: ROUNDS,
      evalEvery: 1000,
      roundDeadlineMs: 60_000,
      quorum: { fraction: 1, minimum: WORKERS },
      aggregation,
    };
    const leader = await cluster.leader();
    const one = single.app.runs.create(patch);
    const many = leader.registry.create(patch);
    expect(bytes(many.params).equals(bytes(one.params))).toBe(true);
    const initial = one.params.slice();
    const oneWorkers: RawWorker[] = [];
    const manyWorkers: RawWorker[] = [];
    for (let w = 0; w < WORKERS; w++) {
      oneWorkers.push(await joinRaw(single.url, one.id));
      manyWorkers.push(await joinRaw(cluster.members[w % 3]!.url, many.id));
    }
    // Each cluster process holds two of the six: the leader adds three partial sums.
    for (const { member } of cluster.members) expect(member.io.sockets.sockets.size).toBeGreaterThanOrEqual(2);
    one.start();
    many.start();
    for (let v = 0; v < ROUNDS; v++) {
      for (const [workers, runId] of [
        [oneWorkers, one.id],
        [manyWorkers, many.id],
      ] as const) {
        // Arrival order differs between the two: reversed in the cluster.
        const order = runId === many.id ? [...workers.keys()].reverse() : [...workers.keys()];
        for (const w of order) {
          const worker = workers[w]!;
          const round = await worker.nextRound(30_000);
          expect(round.version).toBe(v);
          const ack = await worker.socket
            .timeout(30_000)
            .emitWithAck('gradient:submit', fixedGradient(one.layout, w, v, runId, worker.accepted.workerId));
          expect(ack.ok).toBe(true);
        }
      }
      await waitFor(() => one.history.length > v && many.history.length > v, 30_000, `round ${v} in both`);
      expect(many.version).toBe(one.version);
      expect(bytes(many.params).equals(bytes(one.params))).toBe(true);
      expect(many.history[v]!.contributors).toBe(WORKERS);
    }
    expect(bytes(one.params).equals(bytes(initial))).toBe(false);
    for (const worker of [...oneWorkers, ...manyWorkers]) worker.close();
    expect(single.errors).toEqual([]);
    expect(cluster.errors).toEqual([]);
  });
});
