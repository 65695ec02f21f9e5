import { describe, expect, it } from 'vitest';
import { createModelLayout } from '../model/layout';
import {
  asModelVersion,
  asRunId,
  asWorkerId,
  type GradientSubmission,
  type RoundOpen,
  type WorkerAssignment,
} from '../protocol';
import { DEFAULT_RUN_CONFIG } from '../schema/runConfig';
import { uniformArray } from '../testing/seeded';
import { encodeWeights } from './modelCodec';
import { RoundPlayer, type RoundTrainer, type SubmitAnswer } from './roundPlayer';
import { shardIndices } from './shard';

const layout = createModelLayout(DEFAULT_RUN_CONFIG.model);
const labels = Uint8Array.from({ length: 200 }, (_, i) => i % 10);
const runId = asRunId('r1');
const assignment: WorkerAssignment = {
  workerId: asWorkerId(3),
  runId,
  config: { ...DEFAULT_RUN_CONFIG, shards: 4 },
  slot: 5,
  shard: 1,
  maxMessageBytes: 1_000,
};
const weights = uniformArray(layout.parameterCount, 1);
const full = (version: number, run = runId): RoundOpen => ({
  runId: run,
  version: asModelVersion(version),
  deadline: 0,
  delivery: 'full',
  layers: encodeWeights(layout, weights),
});

/** A trainer that records the versions it trained and answers `bytes` bytes per layer after `gate`. */
function fakeTrainer(trained: number[], bytes = 10, gate: Promise<void> = Promise.resolve()): RoundTrainer {
  return {
    layout,
    // A clock that stands still: the round's time is then exactly what the trainer reports.
    clock: { now: () => 0, source: 'wall' },
    async round(w, version) {
      // The replica decoded the round's weights (a spot check: comparing every float is slow for the MLP).
      if (w.length !== weights.length || w[7] !== weights[7] || w.at(-1) !== weights.at(-1))
        throw new Error("not the round's weights");
      await gate;
      trained.push(version);
      return {
        layers: layout.tensors.map(() => new Uint8Array(bytes)),
        loss: 1,
        layerStats: [],
        computeMs: 2,
        compressMs: 3,
        encodeMs: 1,
        clock: 'wall',
      };
    },
    dispose: () => {},
  };
}

/** A player of `trainer` whose transport accepts every gradient and records it. */
function player(trainer: RoundTrainer, extra: Partial<ConstructorParameters<typeof RoundPlayer>[0]> = {}) {
  const sent: GradientSubmission[] = [];
  const syncs: string[] = [];
  const failures: unknown[] = [];
  const shards: Uint32Array[] = [];
  const p = new RoundPlayer<RoundTrainer>({
    labels: () => labels,
    build: (_a, shard) => {
      shards.push(shard);
      return trainer;
    },
    transport: {
      submit: async (s): Promise<SubmitAnswer> => {
        sent.push(s);
        return { ok: true, bytes: 1 };
      },
      requestModel: (id) => syncs.push(id),
    },
    now: () => 0,
    events: { failed: (_round, error) => failures.push(error) },
    ...extra,
  });
  return { p, sent, syncs, failures, shards };
}

const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

describe('the round player', () => {
  it("trains the assignment's shard (core's shard choice) and submits as the assigned worker", async () => {
    const trained: number[] = [];
    const { p, sent, shards } = player(fakeTrainer(trained));
    await p.assign(assignment);
    p.open(full(0));
    await settle();
    expect(shards).toEqual([shardIndices(labels, assignment.config, 1)]);
    expect(trained).toEqual([0]);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      runId,
      workerId: 3,
      version: 0,
      loss: 1,
      computeMs: 6,
      times: { compressMs: 3, encodeMs: 1, applyMs: 0, clock: 'wall' },
    });
  });

  it('plays only the newest round that came while it was busy, and none of another run', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const trained: number[] = [];
    const { p, sent } = player(fakeTrainer(trained, 10, gate));
    await p.assign(assignment);
    p.open(full(0));
    p.open(full(1));
    p.open(full(2));
    p.open(full(9, asRunId('other')));
    release();
    await settle();
    await settle();
    // Round 0 was taken at once; 1 and 2 were overtaken while it trained, and the other run's round waits for an
    // assignment to it.
    expect(trained).toEqual([0]);
    p.open(full(3));
    await settle();
    expect(trained).toEqual([0, 3]);
    expect(sent.map((s) => s.version)).toEqual([0, 3]);
  });

  it('asks for a sync when its replica cannot apply a round, and trains nothing', async () => {
    const trained: number[] = [];
    const { p, sent, syncs } = player(fakeTrainer(trained));
    await p.assign({ ...assignment, config: { ...assignment.config, downlink: 'relay' } });
    p.open({
      ...full(4),
      delivery: 'relay',
      layers: [],
      relayed: new Uint8Array(0),
      relayedLengths: [],
      multipliers: [],
    });
    await settle();
    expect(syncs).toEqual([runId]);
    expect(trained).toEqual([]);
    expect(sent).toEqual([]);
  });

  it('withholds a gradient its host vetoes, and refuses one over the message limit', async () => {
    const trained: number[] = [];
    const vetoed = player(fakeTrainer(trained), { beforeSubmit: async () => false });
    await vetoed.p.assign(assignment);
    vetoed.p.open(full(0));
    await settle();
    expect(trained).toEqual([0]);
    expect(vetoed.sent).toEqual([]);

    const large = player(fakeTrainer([], 1_000));
    await large.p.assign(assignment);
    large.p.open(full(0));
    await settle();
    expect(large.sent).toEqual([]);
    expect(String(large.failures[0])).toMatch(/exceeds the server's limit of 1000/);
  });

  it('sends nothing once paused mid-round, and plays again after resume', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const trained: number[] = [];
    const { p, sent } = player(fakeTrainer(trained, 10, gate));
    await p.assign(assignment);
    p.open(full(0));
    p.pause();
    release();
    await settle();
    expect(trained).toEqual([0]);
    expect(sent).toEqual([]);
    p.open(full(1));
    await settle();
    expect(trained).toEqual([0]);
    p.resume();
    p.open(full(2));
    await settle();
    expect(sent.map((s) => s.version)).toEqual([2]);
  });
});
