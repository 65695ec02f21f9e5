/**
 * The compressed downlinks keep every replica bit-identical to the server's
 * model (docs/protocol.md, "Downlink"): headless workers (the tab's own
 * session and socket channel, CPU backend) train 320 rounds of a real
 * in-process server while workers join, leave, rejoin with their key and
 * disconnect for good, and one plays the classroom attacker for a while (the
 * relay forwards its multiplier). Each round every worker reports the
 * modelHash of its replica; it must equal the hash of the server's weights
 * and momentum at that version, no replica may ever fail its check, the only
 * syncs are the ones joins and rejoins cause, and the model downlink must be
 * a fraction of the float32 model's; `auto` as well, whose training is
 * `full`'s (server/run/downlinkAuto.test.ts checks that bit for bit). Batch 8
 * keeps the rounds quick.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { socketChannelFactory } from '../../client/net/workerChannel';
import { memoryIdentity, type IdentityStore } from '../../client/net/workerIdentity';
import { quietSink, runWorkerSession, type WorkerSession } from '../../client/session/workerSession';
import type { DownlinkView } from '../../client/ui/store/workerStore';
import { loadMnist, type MnistData } from '../../core/data';
import type { DownlinkMode, RunConfigPatch } from '../../core/protocol';
import { denseBytes } from '../../core/codec';
import { createModelLayout } from '../../core/model';
import { modelHash } from '../../core/training/modelUpdate';
import { createFileReader } from '../../server/data/fileReader';
import { waitFor } from '../../server/local';
import type { Run } from '../../server/run/run';
import { inProcessServerPerFile } from './testing';

const server = inProcessServerPerFile();
let data: MnistData;
beforeAll(async () => {
  data = await loadMnist(createFileReader());
});

/** One headless worker and every (version, replica hash) its session reported. */
interface Worker {
  readonly name: string;
  readonly identity: IdentityStore;
  readonly reports: DownlinkView[];
  session: WorkerSession;
}

async function startWorker(
  run: Run,
  name: string,
  identity: IdentityStore = memoryIdentity(),
  reports: DownlinkView[] = [],
): Promise<Worker> {
  const session = await runWorkerSession({
    sink: { ...quietSink(), setDownlink: (view) => reports.push(view) },
    backend: async () => ({ kind: 'cpu', reason: 'test' }),
    loadData: async () => data,
    identity: async () => identity,
    openChannel: socketChannelFactory({ url: server().url }),
    name,
    runId: run.id,
    showDigits: false,
  });
  return { name, identity, reports, session };
}

/** Trains `rounds` rounds of `config` under `downlink`, running `churn[v]` once the model reaches version v. */
async function train(
  downlink: DownlinkMode,
  config: RunConfigPatch,
  rounds: number,
  churn: Record<number, (run: Run, workers: Map<string, Worker>) => Promise<void> | void>,
): Promise<{ run: Run; workers: Map<string, Worker>; joins: number }> {
  const run = server().app.runs.create({
    name: `downlink ${downlink}`,
    batchSize: 8,
    shards: 4,
    maxRounds: rounds,
    evalEvery: 100_000,
    roundDeadlineMs: 60_000,
    ...config,
    downlink,
  });
  const workers = new Map<string, Worker>();
  for (const name of ['a', 'b']) workers.set(name, await startWorker(run, name));
  await waitFor(() => run.summary().workers.filter((w) => w.connected).length === 2, 30_000, 'two workers to join');
  let joins = 2;
  run.start();
  const pending = Object.keys(churn)
    .map(Number)
    .sort((x, y) => x - y);
  for (const version of pending) {
    await waitFor(() => run.version >= version, 240_000, `version ${version}`);
    await churn[version]!(run, workers);
  }
  await waitFor(() => run.status === 'finished', 480_000, 'the run to finish');
  joins += Object.values(churnJoins).reduce((a, b) => a + b, 0);
  return { run, workers, joins };
}

/** Joins and rejoins the churn below makes (beyond the first two workers). */
const churnJoins: Record<string, number> = {};

const pause = (name: string) => (_run: Run, workers: Map<string, Worker>) => workers.get(name)!.session.pause();
const resume = (name: string) => (_run: Run, workers: Map<string, Worker>) => {
  churnJoins[name] = (churnJoins[name] ?? 0) + 1;
  workers.get(name)!.session.resume();
};
const join = (name: string) => async (run: Run, workers: Map<string, Worker>) => {
  churnJoins[name] = (churnJoins[name] ?? 0) + 1;
  workers.set(name, await startWorker(run, name));
};
const close = (name: string) => (_run: Run, workers: Map<string, Worker>) => workers.get(name)!.session.close();
const attack = (name: string, on: boolean) => (run: Run, workers: Map<string, Worker>) => {
  const id = run.summary().workers.find((w) => w.name === workers.get(name)!.name)!.workerId;
  run.setAttack(id, on ? { kind: 'sign-flip', factor: 2 } : null);
};

/** The churn of the long runs: a join, a leave and rejoin, an attacker, a disconnect for good, a second rejoin. */
const CHURN = {
  30: join('c'),
  60: attack('c', true),
  80: pause('a'),
  100: attack('c', false),
  110: resume('a'),
  150: close('b'),
  160: join('d'),
  220: pause('c'),
  250: resume('c'),
};

/** Every report of every worker names the server's hash at its version; no replica ever failed. */
function expectIdentical(run: Run, workers: Map<string, Worker>): number {
  const serverHash = new Map<number, string>();
  for (const m of run.history) if (m.downlink?.hash !== undefined) serverHash.set(m.version + 1, m.downlink.hash);
  let checked = 0;
  for (const w of workers.values()) {
    for (const report of w.reports) {
      expect(report.resyncs, `${w.name} at version ${report.version}`).toBe(0);
      const expected = serverHash.get(report.version);
      if (expected === undefined) continue; // version 0: before any update
      expect(report.hash, `${w.name} at version ${report.version}`).toBe(expected);
      checked++;
    }
  }
  return checked;
}

for (const downlink of ['relay', 'atomo', 'auto'] as const) {
  describe(`the ${downlink} downlink`, () => {
    it('keeps every replica bit-identical to the server over 320 rounds of churn', { timeout: 600_000 }, async () => {
      for (const key of Object.keys(churnJoins)) delete churnJoins[key];
      const { run, workers, joins } = await train(
        downlink,
        { scheme: 'atomo-svd', budget: 2, downlinkBudget: 2 },
        320,
        CHURN,
      );
      try {
        const history = run.history;
        expect(history).toHaveLength(320);
        // Rounds where some worker's replica was checked: nearly all (a round can close before a rejoined worker is
        // asked).
        const checked = expectIdentical(run, workers);
        expect(checked).toBeGreaterThan(2 * 300);
        const totals = history.reduce(
          (t, m) => ({
            sync: t.sync + m.downlink!.sync,
            update: t.update + m.downlink!.update,
            full: t.full + m.downlink!.full,
            resyncs: t.resyncs + m.downlink!.resyncs,
          }),
          { sync: 0, update: 0, full: 0, resyncs: 0 },
        );
        expect(totals.resyncs).toBe(0);
        // Under auto round 0 sends the first two workers the model (nothing to relay yet), and their syncs come
        // next round: the relay of two to three spectral ATOMO messages repays a sync within a round.
        expect(totals.full).toBe(downlink === 'auto' ? 2 : 0);
        // One sync per join or rejoin, nothing else.
        expect(totals.sync).toBe(joins);
        expect(totals.update).toBeGreaterThan(2 * 300);
        // The replicas end where the server ends.
        const snapshot = run.snapshot();
        const finalHash = modelHash({ params: snapshot.params, velocity: snapshot.velocity });
        expect(history.at(-1)!.downlink!.hash).toBe(finalHash);
        for (const name of ['a', 'c', 'd']) expect(workers.get(name)!.reports.at(-1)!.version).toBe(319);
        // The dashboard's downlink: the model frames per worker-round, against the float32 model every round.
        const dense = denseBytes(createModelLayout('mlp'));
        const modelDown = run.summary().traffic.modelDown;
        const deliveries = totals.sync + totals.update + totals.full;
        expect(modelDown / deliveries).toBeLessThan(0.25 * dense);
        if (downlink === 'atomo') {
          // Its added variance is recorded every round. With two or more contributors the update's rank usually
          // exceeds s = 2, so its weight layers lose something (it goes exactly when the workers sent few atoms).
          const several = history.filter((m) => m.contributors >= 2);
          const lossy = several.filter((m) => m.downlink!.layers.some((l) => l.closedForm > 0));
          expect(lossy.length).toBeGreaterThan(several.length / 2);
          expect(history.every((m) => m.downlink!.layers.length === 4)).toBe(true);
        }
      } finally {
        for (const w of workers.values()) w.session.close();
      }
    });
  });
}

describe('PowerSGD under the relay downlink', () => {
  it(
    'relays the factors and keeps the replicas identical (error feedback stays on the workers)',
    { timeout: 300_000 },
    async () => {
      for (const key of Object.keys(churnJoins)) delete churnJoins[key];
      const { run, workers } = await train('relay', { scheme: 'powersgd', budget: 2 }, 40, {
        15: pause('a'),
        20: resume('a'),
      });
      try {
        expect(expectIdentical(run, workers)).toBeGreaterThan(2 * 35);
        expect(run.history.reduce((n, m) => n + m.downlink!.resyncs, 0)).toBe(0);
        expect(run.history.at(-1)!.trainLoss).toBeLessThan(run.history[0]!.trainLoss);
      } finally {
        for (const w of workers.values()) w.session.close();
      }
    },
  );
});
