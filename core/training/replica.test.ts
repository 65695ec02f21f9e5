import { describe, expect, it } from 'vitest';
import { SCHEMES } from '../atomo/schemes';
import { encodeForWire } from '../codec';
import { mlpLayout } from '../model/layout';
import { asModelVersion, asRunId, type RoundOpen } from '../protocol';
import { uniformArray } from '../testing/seeded';
import { encodeFlat, encodeWeights, packLayers } from './modelCodec';
import { applyDownlink, modelHash, type ModelState } from './modelUpdate';
import { ModelReplica } from './replica';

const layout = mlpLayout({ inputSize: 12, hiddenSize: 6, classCount: 3 });
const rule = { aggregation: { kind: 'mean' } as const, learningRate: 0.05, momentum: 0.9 };
const runId = asRunId('r1');
const state: ModelState = {
  params: uniformArray(layout.parameterCount, 3),
  velocity: uniformArray(layout.parameterCount, 4),
};

function gradientLayers(seed: number): Uint8Array[] {
  const g = uniformArray(layout.parameterCount, seed);
  return layout.tensors.map((t, layer) => {
    const { sample } = SCHEMES['atomo-svd'].compress(
      g.subarray(t.offset, t.offset + t.size),
      t.shape,
      { budget: 1 },
      { seed, worker: 0, round: 0, layer },
    );
    return encodeForWire(sample, layer);
  });
}

const sync = (version: number, s: ModelState, hash = modelHash(s)): RoundOpen => ({
  runId,
  version: asModelVersion(version),
  deadline: 0,
  delivery: 'sync',
  layers: encodeWeights(layout, s.params),
  velocity: encodeFlat(s.velocity),
  hash,
});

describe('a worker replica', () => {
  const contributions = [gradientLayers(7), gradientLayers(8)];
  const relayed = applyDownlink(
    layout,
    state,
    { kind: 'relay', contributions: contributions.map((layers) => ({ layers, multiplier: 1 })) },
    rule,
  );
  const relay = (version: number, hash = modelHash(relayed)): RoundOpen => ({
    runId,
    version: asModelVersion(version),
    deadline: 0,
    delivery: 'relay',
    layers: [],
    relayed: packLayers(contributions.flat()).packed,
    relayedLengths: packLayers(contributions.flat()).lengths,
    multipliers: [1, 1],
    hash,
  });

  it('starts from a sync and follows a relayed update to the server hash', () => {
    const replica = new ModelReplica(layout);
    const first = replica.receive(sync(4, state), rule);
    expect(first).toMatchObject({ kind: 'ready', verified: true });
    const next = replica.receive(relay(5), rule);
    expect(next.kind).toBe('ready');
    if (next.kind === 'ready') expect(next.weights).toEqual(relayed.params);
    expect(replica.version).toBe(5);
    expect(replica.hash()).toBe(modelHash(relayed));
    // The same round opened again (abandoned and reopened): nothing to apply, the hash still holds.
    expect(replica.receive(relay(5), rule).kind).toBe('ready');
  });

  it('asks for a sync when the hash differs, the update starts elsewhere, or it holds nothing', () => {
    const wrongHash = new ModelReplica(layout);
    wrongHash.receive(sync(4, state), rule);
    expect(wrongHash.receive(relay(5, '0123456789abcdef'), rule)).toMatchObject({ kind: 'resync' });
    expect(wrongHash.version).toBe(-1);

    const behind = new ModelReplica(layout);
    behind.receive(sync(2, state), rule);
    expect(behind.receive(relay(5), rule)).toMatchObject({
      kind: 'resync',
      reason: expect.stringContaining('version 2'),
    });

    expect(new ModelReplica(layout).receive(relay(5), rule).kind).toBe('resync');
  });

  it('never throws on a malformed update: a truncated layer or a wrong count means a sync', () => {
    const replica = new ModelReplica(layout);
    replica.receive(sync(4, state), rule);
    const truncated = packLayers([contributions[0]![0]!.subarray(0, 9), ...contributions.flat().slice(1)]);
    expect(
      replica.receive({ ...relay(5), relayed: truncated.packed, relayedLengths: truncated.lengths }, rule).kind,
    ).toBe('resync');
    replica.receive(sync(4, state), rule);
    expect(replica.receive({ ...relay(5), relayedLengths: [...relay(5).relayedLengths!.slice(1), 1] }, rule).kind).toBe(
      'resync',
    );
    replica.receive(sync(4, state), rule);
    expect(replica.receive({ ...relay(5), multipliers: [1] }, rule).kind).toBe('resync');
  });

  it('takes a full model as it is and forgets its replica', () => {
    const replica = new ModelReplica(layout);
    replica.receive(sync(4, state), rule);
    const full = replica.receive(
      {
        runId,
        version: asModelVersion(5),
        deadline: 0,
        delivery: 'full',
        layers: encodeWeights(layout, relayed.params),
      },
      rule,
    );
    expect(full).toMatchObject({ kind: 'ready', verified: false });
    expect(replica.version).toBe(-1);
  });
});
