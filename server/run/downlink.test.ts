/**
 * Who gets which round:open under the compressed downlinks (docs/protocol.md,
 * "Downlink"), on a hand-driven clock with a fake model: a joining worker gets
 * a sync, a worker in step gets the update, the relay falls back to the full
 * model when the relayed messages outweigh it, a failed hash check costs one
 * sync per round, and a reconfigured run resyncs everyone; `auto` sends each
 * member the smaller exact delivery. The replicas' maths
 * itself is core/training's (modelUpdate.test.ts); a real 320-round run with
 * churn is scripts/swarm/downlink.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { SCHEMES } from '../../core/atomo/schemes';
import { encodeForWire, encodeLayer } from '../../core/codec';
import { createModelLayout, type ModelLayout } from '../../core/model/layout';
import { asRunId, asWorkerId, type RoundOpen, type RunConfigPatch, type WorkerId } from '../../core/protocol';
import { DEFAULT_RUN_CONFIG } from '../../core/schema';
import { ModelReplica } from '../../core/training/replica';
import { modelHash } from '../../core/training/modelUpdate';
import { uniformArray } from '../../core/testing/seeded';
import type { Evaluation, ModelRuntime } from '../model/model';
import { Run } from './run';
import { applyConfigPatch } from './runConfig';
import { FakeScheduler } from '../testing/fakeScheduler';
import type { SubmissionEnvelope } from '../protocol/validation';

const LAYOUT = createModelLayout('mlp');
const [A, B, C, D] = [1, 2, 3, 4].map(asWorkerId) as [WorkerId, WorkerId, WorkerId, WorkerId];

const model: ModelRuntime = {
  layout: (): ModelLayout => LAYOUT,
  initialWeights: (_kind, seed) => uniformArray(LAYOUT.parameterCount, seed).map((x) => x * 0.05),
  evaluate: () => new Promise<Evaluation>(() => undefined),
};

/** A run on the fake clock whose round:open messages are recorded per worker. */
function relayRun(patch: RunConfigPatch, ids: readonly WorkerId[]) {
  const scheduler = new FakeScheduler();
  const received: Map<WorkerId, RoundOpen[]> = new Map();
  const run = Run.create(
    {
      model,
      scheduler,
      onError: (error) => {
        throw error;
      },
      hooks: {
        openRound: (_run, deliveries) => {
          for (const { workers, message } of deliveries)
            for (const w of workers) received.set(w, [...(received.get(w) ?? []), message]);
        },
        roundClosed: () => undefined,
        changed: () => undefined,
      },
    },
    asRunId('r'),
    applyConfigPatch(DEFAULT_RUN_CONFIG, { evalEvery: 1000, roundDeadlineMs: 1000, ...patch }),
    'created',
  );
  for (const id of ids) {
    run.addMember(id);
    run.setConnected(id, true);
  }
  run.start();
  scheduler.flush();
  const last = (w: WorkerId) => received.get(w)!.at(-1)!;
  return { run, scheduler, received, last };
}

/** An honest spectral ATOMO submission of worker `w` (budget 2), a dense one, or QSGD's at the run's levels. */
function submission(run: Run, w: WorkerId, scheme: 'atomo-svd' | 'none' | 'qsgd' = 'atomo-svd'): SubmissionEnvelope {
  const g = uniformArray(LAYOUT.parameterCount, 100 + w + 7 * run.version).map((x) => x * 0.01);
  return {
    runId: run.id,
    workerId: w,
    version: run.version,
    layers: LAYOUT.tensors.map((t, layer) => {
      const values = g.subarray(t.offset, t.offset + t.size);
      if (scheme === 'none') return encodeLayer({ scheme: 'none', shape: t.shape, values }, layer);
      const stream = { seed: 1, worker: w, round: run.version, layer };
      if (scheme === 'qsgd') {
        const { levels, qsgdCoding } = run.config;
        return encodeForWire(SCHEMES.qsgd.compress(values, t.shape, { levels, qsgdCoding }, stream).sample, layer);
      }
      return encodeForWire(SCHEMES['atomo-svd'].compress(values, t.shape, { budget: 2 }, stream).sample, layer);
    }),
    loss: 1,
    layerStats: LAYOUT.tensors.map(() => ({ closedForm: 0, realised: 0, gradientNormSq: 1 })),
    computeMs: 1,
  };
}

describe('Run: deliveries under the compressed downlinks', () => {
  it('relay: a sync first, then the relayed update, which a replica turns into the server’s model', () => {
    const { run, scheduler, received, last } = relayRun({ scheme: 'atomo-svd', budget: 2, downlink: 'relay' }, [A, B]);
    expect(last(A).delivery).toBe('sync');
    expect(last(A).hash).toBe(modelHash({ params: run.params, velocity: run.snapshot().velocity }));
    const replica = new ModelReplica(LAYOUT);
    expect(replica.receive(last(A), run.config).kind).toBe('ready');
    run.acceptGradient(A, submission(run, A));
    run.acceptGradient(B, submission(run, B));
    scheduler.flush();
    const update = last(A);
    expect(update).toMatchObject({ delivery: 'relay', version: 1, multipliers: [1, 1] });
    expect(update.layers).toHaveLength(0);
    // The same message went to both, and it is far smaller than the model.
    expect(last(B)).toBe(update);
    expect(run.history[0]!.downlink).toMatchObject({ mode: 'relay', sync: 2, update: 0, full: 0 });
    const outcome = replica.receive(update, run.config);
    expect(outcome.kind).toBe('ready');
    if (outcome.kind === 'ready') expect(outcome.weights).toEqual(run.params);
    expect(run.history[0]!.downlink!.hash).toBe(replica.hash());
    // A worker that joins now is behind: a sync, while the others get the update.
    run.addMember(C);
    run.setConnected(C, true);
    run.acceptGradient(A, submission(run, A));
    run.acceptGradient(B, submission(run, B));
    scheduler.flush();
    expect(last(C).delivery).toBe('sync');
    expect(last(A).delivery).toBe('relay');
    expect(run.history[1]!.bytesDown).toBeLessThan(3 * 407_128);
    expect(received.get(C)).toHaveLength(1);
  });

  it('relay: sends the full model instead when the relayed messages would outweigh it, and syncs afterwards', () => {
    const { run, scheduler, last } = relayRun({ scheme: 'none', downlink: 'relay' }, [A, B]);
    run.acceptGradient(A, submission(run, A, 'none'));
    run.acceptGradient(B, submission(run, B, 'none'));
    scheduler.flush();
    // Two dense gradients (2 × 407 kB) against one dense model: the model.
    expect(last(A).delivery).toBe('full');
    expect(last(B).delivery).toBe('full');
    run.acceptGradient(A, submission(run, A, 'none'));
    run.acceptGradient(B, submission(run, B, 'none'));
    scheduler.flush();
    expect(run.history[1]!.downlink).toMatchObject({ full: 2, sync: 0, update: 0 });
  });

  it('atomo: the server applies its own compressed update, which the replica decodes to the same model', () => {
    const { run, scheduler, last } = relayRun(
      { scheme: 'atomo-svd', budget: 2, downlink: 'atomo', downlinkBudget: 2 },
      [A, B],
    );
    const replica = new ModelReplica(LAYOUT);
    replica.receive(last(A), run.config);
    run.acceptGradient(A, submission(run, A));
    run.acceptGradient(B, submission(run, B));
    scheduler.flush();
    expect(last(A).delivery).toBe('atomo');
    const outcome = replica.receive(last(A), run.config);
    expect(outcome.kind).toBe('ready');
    expect(replica.hash()).toBe(run.history[0]!.downlink!.hash);
    const layers = run.history[0]!.downlink!.layers;
    expect(layers).toHaveLength(LAYOUT.tensors.length);
    // Two rank-2 estimates make a rank-4 update: at s = 2 the weight layers lose something.
    expect(layers[0]!.closedForm).toBeGreaterThan(0);
    expect(layers[0]!.updateNormSq).toBeGreaterThan(0);
  });

  it('a failed hash check costs one sync that round, not more; a reconfigured run resyncs everyone', () => {
    const { run, scheduler, received, last } = relayRun({ scheme: 'atomo-svd', budget: 2, downlink: 'relay' }, [A, B]);
    run.acceptGradient(A, submission(run, A));
    run.acceptGradient(B, submission(run, B));
    scheduler.flush();
    const before = received.get(A)!.length;
    run.requestSync(A);
    run.requestSync(A);
    expect(received.get(A)!.length).toBe(before + 1);
    expect(last(A)).toMatchObject({ delivery: 'sync', version: 1 });
    run.acceptGradient(A, submission(run, A));
    run.acceptGradient(B, submission(run, B));
    expect(run.history[1]!.downlink!.resyncs).toBe(1);
    run.pause();
    run.configure({ learningRate: 0.05 });
    run.resume();
    scheduler.flush();
    expect(last(A).delivery).toBe('sync');
    expect(last(B).delivery).toBe('sync');
  });

  it('a full run sends the dense model only, with no hash and no replica bookkeeping', () => {
    const { run, scheduler, last } = relayRun({ scheme: 'atomo-svd', budget: 2, downlink: 'full' }, [A]);
    run.acceptGradient(A, submission(run, A));
    scheduler.flush();
    expect(last(A).delivery).toBe('full');
    expect(last(A).hash).toBeUndefined();
    expect(run.history[0]!.downlink).toMatchObject({ mode: 'full', full: 1 });
    expect(run.history[0]!.downlink!.hash).toBeUndefined();
  });
});

describe('Run: deliveries under the auto downlink', () => {
  /** QSGD at 255 levels, fixed coding, one bucket a layer: 114,580 B a message, so 3 fit under the model, 4 do not. */
  const QSGD = { scheme: 'qsgd', levels: 255, qsgdCoding: 'fixed', bucketSize: 0, downlink: 'auto' } as const;
  const MODEL = 407_128;
  const submitAll = (run: Run, scheduler: FakeScheduler, ids: readonly WorkerId[]) => {
    for (const id of ids) run.acceptGradient(id, submission(run, id, 'qsgd'));
    scheduler.flush();
  };

  it('is the default of a fresh run', () => {
    expect(DEFAULT_RUN_CONFIG.downlink).toBe('auto');
    expect(applyConfigPatch(DEFAULT_RUN_CONFIG, {}).downlink).toBe('auto');
  });

  it('sends the model until a smaller relay exists, syncs when it pays, then relays; replicas match', () => {
    const { run, scheduler, last } = relayRun(QSGD, [A, B]);
    // Nothing to relay at version 0: the model, no sync (the momentum would cost as much again).
    expect(last(A).delivery).toBe('full');
    const replica = new ModelReplica(LAYOUT);
    expect(replica.receive(last(A), run.config).kind).toBe('ready');
    submitAll(run, scheduler, [A, B]);
    expect(run.history[0]!.downlink).toMatchObject({
      mode: 'auto',
      full: 2,
      sync: 0,
      update: 0,
      choice: { relayBytes: null, messages: 0, modelBytes: MODEL },
    });
    // Two messages (229 kB) beat the model by 178 kB a round: the 407 kB of momentum pays back within 4 rounds.
    expect(last(A).delivery).toBe('sync');
    replica.receive(last(A), run.config);
    submitAll(run, scheduler, [A, B]);
    const choice = run.history[1]!.downlink!.choice!;
    expect(choice).toMatchObject({ messages: 2, modelBytes: MODEL });
    // It repays the momentum's 407,092 bytes within AUTO_SYNC_PAYBACK_ROUNDS = 4 rounds.
    expect(choice.relayBytes).toBeLessThan(MODEL - 407_092 / 4);
    expect(last(A).delivery).toBe('relay');
    const outcome = replica.receive(last(A), run.config);
    expect(outcome.kind).toBe('ready');
    if (outcome.kind === 'ready') expect(outcome.weights).toEqual(run.params);
    expect(replica.hash()).toBe(run.history[1]!.downlink!.hash);
  });

  it('sends the model when the relay is larger, and syncs a member behind only when the relay repays it', () => {
    const { run, scheduler, last } = relayRun(QSGD, [A, B, C]);
    submitAll(run, scheduler, [A, B, C]);
    // Three messages (344 kB) save 63 kB a round: 4 rounds repay 254 kB of the momentum's 407 kB, so no sync.
    expect([A, B, C].map((w) => last(w).delivery)).toEqual(['full', 'full', 'full']);
    submitAll(run, scheduler, [A, B]);
    scheduler.advance(1000);
    expect(run.history[1]!.downlink).toMatchObject({ full: 3, sync: 0, update: 0 });
    expect(run.history[1]!.downlink!.choice!.messages).toBe(3);
    // Two messages: everyone behind gets a sync.
    expect([A, B, C].map((w) => last(w).delivery)).toEqual(['sync', 'sync', 'sync']);
    submitAll(run, scheduler, [A, B, C]);
    expect(run.history[2]!.downlink).toMatchObject({ sync: 3, full: 0, update: 0 });
    // Three messages: the members in step get them (smaller than the model); one that reconnected gets the model.
    expect([A, B, C].map((w) => last(w).delivery)).toEqual(['relay', 'relay', 'relay']);
    for (const id of [A, B, C]) run.acceptGradient(id, submission(run, id, 'qsgd'));
    run.setConnected(C, false);
    run.setConnected(C, true);
    scheduler.flush();
    expect([A, B, C].map((w) => last(w).delivery)).toEqual(['relay', 'relay', 'full']);
    submitAll(run, scheduler, [A, B, C]);
    expect(run.history[4]!.downlink).toMatchObject({ update: 2, full: 1, sync: 0 });
  });

  it('relays nothing larger than the model: with four messages everyone gets the model', () => {
    const { run, scheduler, last } = relayRun(QSGD, [A, B, C, D]);
    submitAll(run, scheduler, [A, B, C, D]);
    expect([A, B, C, D].map((w) => last(w).delivery)).toEqual(['full', 'full', 'full', 'full']);
    submitAll(run, scheduler, [A, B, C, D]);
    const { choice } = run.history[1]!.downlink!;
    expect(choice!.messages).toBe(4);
    expect(choice!.relayBytes).toBeGreaterThan(choice!.modelBytes);
  });
});
