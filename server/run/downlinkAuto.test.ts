/**
 * The `auto` downlink trains exactly as `full` does, in fewer bytes
 * (docs/protocol.md, "Downlink"): two runs on the fake clock, one `full` and
 * one `auto`, same seed, same gradients and the same churn for 320 rounds:
 * workers join, leave mid-round, reconnect, miss rounds, and one plays the
 * classroom attacker for a while. Every `auto` worker keeps its model with the
 * tab's ModelReplica; each round every worker's weights must be bit for bit
 * the `full` run's model, and each round's bytes must be what `auto`'s rule
 * says. QSGD at 255 levels (fixed coding) makes a message 114,580 B: up to 3
 * relayed messages are smaller than the 407,128 B model, 4 or more larger,
 * so the churn crosses both ways.
 */
import { describe, expect, it } from 'vitest';
import { SCHEMES } from '../../core/atomo/schemes';
import { encodeForWire } from '../../core/codec';
import { createModelLayout } from '../../core/model/layout';
import {
  asBytes,
  asModelVersion,
  asWorkerId,
  roundOpenBytes,
  type RoundOpen,
  type RunConfigPatch,
  type WorkerId,
} from '../../core/protocol';
import { seededRng, uniformArray } from '../../core/testing/seeded';
import { ModelReplica } from '../../core/training/replica';
import { decodeWeights } from '../../core/training/modelCodec';
import type { SubmissionEnvelope } from '../protocol/validation';
import { makeRun } from '../testing/runHarness';
import { autoSyncPays } from './downlink';
import type { Run } from './run';

const LAYOUT = createModelLayout('mlp');
const ROUNDS = 320;
const IDS = [1, 2, 3, 4, 5, 6].map(asWorkerId);
const CONFIG: RunConfigPatch = {
  scheme: 'qsgd',
  levels: 255,
  qsgdCoding: 'fixed',
  bucketSize: 0,
  seed: 7,
  maxRounds: 1000,
  evalEvery: 1000,
  roundDeadlineMs: 1000,
};

/** Encoded QSGD gradients to draw from (compressing a fresh one per worker-round would take minutes). */
const POOL = Array.from({ length: 12 }, (_, i) => {
  const g = uniformArray(LAYOUT.parameterCount, 50 + i).map((x) => x * 0.02);
  return LAYOUT.tensors.map((t, layer) =>
    encodeForWire(
      SCHEMES.qsgd.compress(
        g.subarray(t.offset, t.offset + t.size),
        t.shape,
        { levels: 255, qsgdCoding: 'fixed', bucketSize: 0 },
        { seed: 7, worker: i, round: 0, layer },
      ).sample,
      layer,
    ),
  );
});

function submission(run: Run, w: WorkerId): SubmissionEnvelope {
  return {
    runId: run.id,
    workerId: w,
    version: asModelVersion(run.version),
    layers: POOL[(run.version * 5 + w * 7) % POOL.length]!,
    loss: 1,
    layerStats: LAYOUT.tensors.map(() => ({ closedForm: 0, realised: 0, gradientNormSq: 1 })),
    computeMs: 1,
  };
}

/** One round's script: who leaves mid-round, who (re)connects, who does not submit, the attacker's switch. */
interface Step {
  readonly leave: readonly WorkerId[];
  readonly connect: readonly WorkerId[];
  readonly skip: readonly WorkerId[];
  readonly attack?: boolean;
}

/** The churn, drawn once from a fixed seed and played identically on both runs. */
function script(): Step[] {
  const rng = seededRng(2026);
  const connected = new Set(IDS.slice(0, 3));
  const steps: Step[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const participants = [...connected];
    const leave = participants.filter(() => rng() < 0.12).slice(0, participants.length - 1);
    const staying = participants.filter((w) => !leave.includes(w));
    // A round closes at its deadline with half of those it asked (the default quorum), or once every one left sent.
    const skip = staying
      .filter(() => rng() < 0.2)
      .slice(0, Math.max(0, staying.length - Math.ceil(participants.length / 2)));
    for (const w of leave) connected.delete(w);
    const connect = IDS.filter((w) => !connected.has(w) && !leave.includes(w) && rng() < 0.15);
    for (const w of connect) connected.add(w);
    steps.push({ leave, connect, skip, ...(r === 100 ? { attack: true } : r === 140 ? { attack: false } : {}) });
  }
  return steps;
}

/** A run under `downlink` and the round:open messages each worker received, by version. */
function downlinkRun(downlink: 'full' | 'auto') {
  const received = new Map<WorkerId, RoundOpen>();
  const sent: { workers: readonly WorkerId[]; message: RoundOpen }[] = [];
  const made = makeRun({
    patch: { ...CONFIG, downlink },
    hooks: {
      openRound: (_run, deliveries) => {
        for (const d of deliveries) {
          sent.push(d);
          for (const w of d.workers) received.set(w, d.message);
        }
      },
    },
  });
  return { ...made, received, sent };
}

const bitsOf = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

describe('the auto downlink', () => {
  it(
    `keeps every replica bit-identical to the full run over ${ROUNDS} rounds of churn, in fewer bytes`,
    { timeout: 300_000 },
    () => {
      const full = downlinkRun('full');
      const auto = downlinkRun('auto');
      const replicas = new Map(IDS.map((w) => [w, new ModelReplica(LAYOUT)]));
      const steps = script();
      for (const { run } of [full, auto]) {
        for (const w of IDS.slice(0, 3)) {
          run.addMember(w);
          run.setConnected(w, true);
        }
        run.start();
      }
      const model = 407_128;
      const momentum = model - 36; // one 1 × parameters tensor: 3 header words fewer than the model's 4 tensors
      const counts = { update: 0, sync: 0, fullLarger: 0, fullBehind: 0, checked: 0 };
      let fullTotal = 0;
      let autoTotal = 0;
      for (let r = 0; r < ROUNDS; r++) {
        for (const made of [full, auto]) made.scheduler.flush();
        expect(auto.run.version).toBe(r);
        expect(full.run.version).toBe(r);
        const fullRound = full.run.round!;
        expect([...auto.run.round!.participants]).toEqual([...fullRound.participants]);
        // Every auto worker's weights are the full run's model at this version, bit for bit.
        const expected = bitsOf(full.run.params);
        expect(bitsOf(auto.run.params).equals(expected), `the servers' models at ${r}`).toBe(true);
        for (const w of fullRound.participants) {
          const fullMessage = full.received.get(w)!;
          expect(bitsOf(decodeWeights(LAYOUT, fullMessage.layers.map(asBytes))).equals(expected)).toBe(true);
          const outcome = replicas.get(w)!.receive(auto.received.get(w)!, auto.run.config);
          expect(outcome.kind, `worker ${w} at ${r}`).toBe('ready');
          if (outcome.kind === 'ready') expect(bitsOf(outcome.weights).equals(expected), `${w} at ${r}`).toBe(true);
          counts.checked++;
        }
        // The bytes are what auto's rule says: an update only when smaller than the model, a sync only when it pays.
        const bytes = (made: typeof full) =>
          made.sent.reduce((sum, d) => sum + d.workers.length * roundOpenBytes(d.message), 0);
        const fullBytes = bytes(full);
        const autoBytes = bytes(auto);
        fullTotal += fullBytes;
        autoTotal += autoBytes;
        expect(fullBytes).toBe(fullRound.participants.size * model);
        const choice = auto.run.round!.downlinkChoice!;
        const kinds = { update: 0, sync: 0, full: 0 };
        for (const d of auto.sent) {
          const kind = d.message.delivery === 'relay' ? 'update' : d.message.delivery === 'sync' ? 'sync' : 'full';
          kinds[kind] += d.workers.length;
          if (kind === 'update') expect(roundOpenBytes(d.message)).toBe(choice.relayBytes);
          if (kind === 'sync') expect(roundOpenBytes(d.message)).toBe(model + momentum);
        }
        const relaySmaller = choice.relayBytes !== null && choice.relayBytes < model;
        if (!relaySmaller) {
          expect(kinds).toEqual({ update: 0, sync: 0, full: fullRound.participants.size });
          expect(autoBytes).toBe(fullBytes);
          if (choice.relayBytes !== null) counts.fullLarger++;
        } else {
          const pays = autoSyncPays(momentum, model, choice.relayBytes!);
          if (!pays) expect(kinds.sync).toBe(0);
          if (pays) expect(kinds.full).toBe(0);
          if (!pays) counts.fullBehind += kinds.full;
          // Fewer bytes than the model to every worker in step; a sync costs the momentum more, once.
          expect(autoBytes).toBe(
            kinds.update * choice.relayBytes! + kinds.sync * (model + momentum) + kinds.full * model,
          );
          if (kinds.sync === 0) expect(autoBytes).toBeLessThanOrEqual(fullBytes);
          if (kinds.sync === 0 && kinds.update > 0) expect(autoBytes).toBeLessThan(fullBytes);
        }
        counts.update += kinds.update;
        counts.sync += kinds.sync;
        for (const made of [full, auto]) {
          made.sent.length = 0;
          made.received.clear();
        }
        // The round's script, the same on both runs.
        const step = steps[r]!;
        for (const { run } of [full, auto]) {
          if (step.attack !== undefined) run.setAttack(IDS[1]!, step.attack ? { kind: 'sign-flip', factor: 2 } : null);
          for (const w of step.leave) run.setConnected(w, false);
          for (const w of step.connect) {
            if (run.member(w) === undefined) run.addMember(w);
            run.setConnected(w, true);
          }
        }
        for (const made of [full, auto]) {
          const round = made.run.round!;
          for (const w of [...round.participants])
            if (!step.skip.includes(w)) made.run.acceptGradient(w, submission(made.run, w));
          if (made.run.version === r) made.scheduler.advance(1000);
          expect(made.run.version, `round ${r} closed`).toBe(r + 1);
        }
        expect(auto.run.history[r]!.contributors).toBe(full.run.history[r]!.contributors);
      }
      // The figures behind the assertions below, for the record of a run.
      console.log(JSON.stringify({ ...counts, fullTotal, autoTotal, ratio: autoTotal / fullTotal }));
      expect(full.seen.errors).toEqual([]);
      expect(auto.seen.errors).toEqual([]);
      expect(auto.run.history.reduce((n, m) => n + m.downlink!.resyncs, 0)).toBe(0);
      // The churn crossed every branch of the rule, many times.
      expect(counts.update).toBeGreaterThan(300);
      expect(counts.sync).toBeGreaterThan(10);
      expect(counts.fullLarger).toBeGreaterThan(10);
      expect(counts.fullBehind).toBeGreaterThan(5);
      expect(counts.checked).toBeGreaterThan(3 * ROUNDS);
      // Strictly fewer bytes in all, and the history's record agrees.
      expect(autoTotal).toBeLessThan(fullTotal);
      const down = (made: typeof full) => made.run.history.reduce((sum, m) => sum + m.bytesDown, 0);
      expect(down(auto)).toBe(autoTotal);
      expect(down(full)).toBe(fullTotal);
    },
  );
});
