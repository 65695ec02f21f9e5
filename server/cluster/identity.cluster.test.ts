/**
 * The cluster computes what one process computes (docs/scaling.md,
 * "Hierarchical aggregation"): six workers send the same fixed gradients to
 * one process and to three cluster processes (two workers each, so the
 * leader adds three partial sums), and after every round the weights are
 * the same bits, under each aggregation rule, with one worker sending a
 * gradient 1000 times too large so the norm bound clips and the median
 * rules discard. Under each downlink mode (full, relay, atomo, auto) every worker
 * is also sent the same round:open bytes by both, the update once replicas
 * are in step; and with one of the server's simulated workers among them,
 * which in a cluster trains on the leader.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMES } from '../../core/atomo/schemes';
import { encodeForWire, encodeLayer } from '../../core/codec';
import type { ModelLayout } from '../../core/model/layout';
import type { AggregationRule, DownlinkMode } from '../../core/schema/runConfig';
import { asBytes, type GradientSubmission, type RoundOpen, type RunConfigPatch, type RunId } from '../../core/protocol';
import { seededRng } from '../../core/testing/seeded';
import { startTestCluster, type TestCluster } from '../testing/cluster';
import {
  TEST_ADMIN_TOKEN,
  connectClient,
  removeDataDir,
  startServer,
  waitFor,
  type TestServer,
} from '../testing/harness';
import { joinRaw, type RawWorker } from '../testing/rawWorker';

const WORKERS = 6;
const ROUNDS = 3;
/** This project's test port block (3650-3699) for the cluster tests' Redis. */
const REDIS_PORT = 3670;

const compressedLayers = new Map<string, Uint8Array>();

/**
 * Worker w's gradient for version v: fixed numbers, worker 5 a thousand times too large; dense, or (`compressed`)
 * spectral ATOMO at budget 2, small enough that relaying six of them is cheaper than the model.
 */
function fixedGradient(
  layout: ModelLayout,
  w: number,
  v: number,
  runId: RunId,
  workerId: number,
  compressed = false,
): GradientSubmission {
  const rng = seededRng(1 + 1000 * v + w);
  const scale = w === WORKERS - 1 ? 1000 : 1;
  const layers = layout.tensors.map((t) => Float32Array.from({ length: t.size }, () => scale * (rng() - 0.5) * 0.02));
  // Where grouping matters: in float64, one process sums 2^60 + 1 − 2^60 + 1 + 1 + 1 = 3, while per-process
  // partial sums (w mod 3) give (2^60 + 1) + (1 + 1) + (−2^60 + 1) = 0. The exact sum gives one answer for both.
  if (!compressed) layers[0]![0] = [2 ** 60, 1, -(2 ** 60), 1, 1, 1][w]!;
  return {
    runId,
    workerId: workerId as GradientSubmission['workerId'],
    version: v as GradientSubmission['version'],
    layers: layout.tensors.map((t, layer) => {
      if (!compressed) return encodeLayer({ scheme: 'none', shape: t.shape, values: layers[layer]! }, layer);
      // The decomposition is the slow part: both servers are sent the same bytes, made once.
      const key = `${w}/${v}/${layer}`;
      const known = compressedLayers.get(key);
      if (known !== undefined) return known;
      const options = { seed: 1, worker: w, round: v, layer };
      const sample = SCHEMES['atomo-svd'].compress(layers[layer]!, t.shape, { budget: 2 }, options).sample;
      const encoded = encodeForWire(sample, layer);
      compressedLayers.set(key, encoded);
      return encoded;
    }),
    loss: 1 + w,
    layerStats: layout.tensors.map(() => ({ closedForm: 0, realised: 0, gradientNormSq: 1 })),
    computeMs: 1,
  };
}

const bytes = (x: Float32Array) => Buffer.from(x.buffer, x.byteOffset, x.byteLength);

/** The binary parts of a round:open, for comparing two of them byte for byte. */
function partsOf(round: RoundOpen): Buffer[] {
  const parts = [...round.layers];
  if (round.velocity !== undefined) parts.push(round.velocity);
  if (round.relayed !== undefined) parts.push(round.relayed);
  return parts.map((part) => Buffer.from(asBytes(part)));
}

/** round:open without its runId, deadline and binary parts (compared separately). */
function headOf(round: RoundOpen): Omit<RoundOpen, 'runId' | 'deadline' | 'layers' | 'velocity' | 'relayed'> {
  const {
    runId: _runId,
    deadline: _deadline,
    layers: _layers,
    velocity: _velocity,
    relayed: _relayed,
    ...head
  } = round;
  return head;
}

const BASE_PATCH: RunConfigPatch = {
  scheme: 'none',
  learningRate: 0.1,
  momentum: 0.9,
  seed: 3,
  maxRounds: ROUNDS,
  evalEvery: 1000,
  roundDeadlineMs: 60_000,
  quorum: { fraction: 1, minimum: WORKERS },
};

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

  /**
   * Six raw workers (and `simulated` of the server's own) in a run of `patch` on one process and on the cluster;
   * after every round the weights are the same bits, and so is every round:open each worker was sent. Returns the
   * deliveries the cluster's workers got, round by round.
   */
  async function compare(patch: RunConfigPatch, compressed: boolean, simulated = 0): Promise<string[][]> {
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
    // The simulated workers join last in both, so each gets the same slot and shard in both.
    const teachers = [
      await connectClient(single.url, TEST_ADMIN_TOKEN),
      await connectClient(cluster.members[1]!.url, TEST_ADMIN_TOKEN),
    ];
    for (let i = 0; i < simulated; i++)
      for (const [teacher, runId] of [
        [teachers[0]!, one.id],
        [teachers[1]!, many.id],
      ] as const) {
        const answer = await teacher.timeout(10_000).emitWithAck('worker:simulate', { runId });
        expect(answer.ok).toBe(true);
      }
    // Each cluster process holds two of the six: the leader adds three partial sums.
    for (const { member } of cluster.members) expect(member.io.sockets.sockets.size).toBeGreaterThanOrEqual(2);
    one.start();
    many.start();
    const deliveries: string[][] = [];
    for (let v = 0; v < ROUNDS; v++) {
      const received: [RoundOpen[], RoundOpen[]] = [[], []];
      for (const [workers, runId, into] of [
        [oneWorkers, one.id, received[0]],
        [manyWorkers, many.id, received[1]],
      ] as const) {
        // Arrival order differs between the two: reversed in the cluster.
        const order = runId === many.id ? [...workers.keys()].reverse() : [...workers.keys()];
        for (const w of order) {
          const worker = workers[w]!;
          const round = await worker.nextRound(30_000);
          into[w] = round;
          expect(round.version).toBe(v);
          const gradient = fixedGradient(one.layout, w, v, runId, worker.accepted.workerId, compressed);
          const ack = await worker.socket.timeout(30_000).emitWithAck('gradient:submit', gradient);
          expect(ack.ok).toBe(true);
        }
      }
      for (let w = 0; w < WORKERS; w++) {
        const [fromOne, fromMany] = [received[0][w]!, received[1][w]!];
        expect(headOf(fromMany)).toEqual(headOf(fromOne));
        const [a, b] = [partsOf(fromOne), partsOf(fromMany)];
        expect(b.length).toBe(a.length);
        a.forEach((part, i) => expect(b[i]!.equals(part)).toBe(true));
      }
      deliveries.push(received[1].map((round) => round.delivery));
      await waitFor(() => one.history.length > v && many.history.length > v, 60_000, `round ${v} in both`);
      expect(many.version).toBe(one.version);
      expect(bytes(many.params).equals(bytes(one.params))).toBe(true);
      expect(many.history[v]!.contributors).toBe(WORKERS + simulated);
      expect(one.history[v]!.contributors).toBe(WORKERS + simulated);
    }
    expect(bytes(one.params).equals(bytes(initial))).toBe(false);
    for (const worker of [...oneWorkers, ...manyWorkers]) worker.close();
    for (const teacher of teachers) teacher.disconnect();
    expect(single.errors).toEqual([]);
    expect(cluster.errors).toEqual([]);
    return deliveries;
  }

  const rules: [string, AggregationRule][] = [
    ['mean', { kind: 'mean' }],
    ['norm-bound', { kind: 'norm-bound', k: 3 }],
    ['median', { kind: 'median' }],
    ['trimmed-mean', { kind: 'trimmed-mean', trim: 0.2 }],
  ];
  // The default downlink, auto: six dense gradients outweigh the model, so everyone gets the model.
  it.each(rules)('%s, %#', async (_name, aggregation) => {
    const deliveries = await compare({ ...BASE_PATCH, aggregation }, false);
    expect(deliveries.flat().every((d) => d === 'full')).toBe(true);
  });

  // Under relay and atomo round 0 syncs every replica, and from then on the replicas are in step and get the update.
  // Under auto round 0 sends the model (nothing to relay yet), round 1 syncs (six messages repay the momentum), then
  // the relay.
  const downlinks: [DownlinkMode, string[]][] = [
    ['full', ['full', 'full', 'full']],
    ['relay', ['sync', 'relay', 'relay']],
    ['atomo', ['sync', 'atomo', 'atomo']],
    ['auto', ['full', 'sync', 'relay']],
  ];
  it.each(downlinks)('the %s downlink', async (downlink, expected) => {
    const patch: RunConfigPatch = { ...BASE_PATCH, scheme: 'atomo-svd', budget: 2, downlink, downlinkBudget: 2 };
    const deliveries = await compare(patch, true);
    expect(deliveries).toEqual(expected.map((delivery) => Array<string>(WORKERS).fill(delivery)));
  });

  it('with a simulated worker, which trains on the leader', async () => {
    const patch: RunConfigPatch = {
      ...BASE_PATCH,
      batchSize: 8,
      quorum: { fraction: 1, minimum: WORKERS + 1 },
      aggregation: { kind: 'mean' },
    };
    await compare(patch, false, 1);
  });
});
