/**
 * Socket fuzz: 10,000 malformed or hostile messages over every
 * client→server event (garbage types, wrong shapes, random bytes, huge
 * strings, stale and future versions, finite-but-huge estimates, teacher
 * actions without the token) from joined and unjoined sockets, while an
 * honest worker trains in each of two runs. The server must stay up, every
 * run must progress, every checkpoint on disk must parse finite, and no
 * teacher action may take effect. Seeded, so a failure replays.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HeadlessTab } from '../../client/net/headlessTab';
import { encodeLayer } from '../../core/codec';
import { ADMIN_EVENTS, type ClientToServerEvents } from '../../core/protocol';
import { seededRng } from '../../core/testing/seeded';
import { decodeCheckpoint } from '../persistence/checkpoint';
import { connectClient, loadTestData, removeDataDir, startServer, waitFor } from '../testing/harness';
import { joinRaw } from '../testing/rawWorker';

const MESSAGES = 10_000;
const EVENTS = [
  'worker:join',
  'worker:leave',
  'gradient:submit',
  'dashboard:subscribe',
  'model:request',
  ...ADMIN_EVENTS,
  'no:such-event',
  '__proto__',
  'constructor',
] as const;

describe('socket fuzz', () => {
  it(`survives ${MESSAGES} hostile messages over every event`, async () => {
    const { train } = await loadTestData();
    // A generous rate limit, so the messages reach the handlers instead of the limiter.
    const server = await startServer({ defaultRun: false, rateLimit: { perSecond: 1e6, burst: 1e6 } });
    try {
      // Two runs, each with an honest worker: the fuzz aims at both, and both must keep training.
      const runs = [0, 1].map((i) =>
        server.app.runs.create(
          {
            name: `fuzz ${i}`,
            scheme: 'atomo-svd',
            budget: 2,
            batchSize: 8,
            maxRounds: 100_000,
            evalEvery: 100_000,
            roundDeadlineMs: 2_000,
          },
          'running',
        ),
      );
      const [run, other] = runs as [(typeof runs)[0], (typeof runs)[0]];
      const configsBefore = runs.map((r) => JSON.stringify(r.config));
      const honest = runs.map((r) => new HeadlessTab({ url: server.url, train, runId: r.id }));
      await Promise.all(honest.map((h) => h.start()));
      await waitFor(() => runs.every((r) => r.version >= 1), 30_000, 'a first honest round in each run');

      const joined = [
        await joinRaw(server.url, run.id),
        await joinRaw(server.url, run.id),
        await joinRaw(server.url, other.id),
      ];
      const stranger = await connectClient(server.url);
      const sockets = [...joined.map((j) => j.socket), stranger];
      const rng = seededRng(20261201);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(rng() * items.length)]!;
      const layout = run.layout;
      const huge = () =>
        layout.tensors.map((tensor, index) => {
          const [rows, cols] = tensor.shape;
          const value = pick([1.8e19, -1.8e19, 3e38, 1e-45, 1e19]);
          return encodeLayer(
            {
              scheme: 'atomo-svd',
              shape: tensor.shape,
              count: 1,
              u: new Float32Array(rows).fill(value),
              v: new Float32Array(cols).fill(value),
              scales: new Float32Array([pick([1, 3.4e38, -1])]),
            },
            index,
          );
        });
      const garbage = (): unknown =>
        pick<() => unknown>([
          () => undefined,
          () => null,
          () => rng() * 1e308,
          () => Number.NaN,
          () => 'x'.repeat(Math.floor(rng() * 5000)),
          () => [1, 2, [3, [4]]],
          () => ({ __proto__: { admin: true }, constructor: { prototype: { admin: true } } }),
          () => new Uint8Array(Math.floor(rng() * 2000)).map(() => Math.floor(rng() * 256)),
          () => ({
            runId: pick([run.id, other.id]),
            workerId: pick([-1, 0, 1, 2, 2 ** 53, 1.5]),
            version: pick([-1, 1e300, run.version]),
          }),
          () => ({
            protocol: pick([1, 0, 'one', 1e9]),
            runId: pick([run.id, other.id, '../etc', 'x'.repeat(200)]),
            name: '\u202e\u0000evil\n'.repeat(40),
            backend: { kind: pick(['webgpu', 'tpu']), detail: 'x'.repeat(300) },
          }),
          () => ({
            runId: pick([run.id, other.id]),
            config: { learningRate: pick([1e9, -1, Number.NaN, 0.1]), nope: 1 },
          }),
          () => ({ workerId: 1, attack: { kind: 'sign-flip', factor: 1e300 } }),
        ])();
      const submission = (target: (typeof runs)[0], workerId: number) => ({
        runId: target.id,
        workerId,
        version: pick([target.version, target.version - 1, target.version + 1, 0]),
        layers: pick([
          huge,
          () => [new Uint8Array(12)],
          () => layout.tensors.map(() => new Uint8Array(Math.floor(rng() * 64)).map(() => Math.floor(rng() * 256))),
        ])(),
        loss: pick([1, Number.NaN, 1e308, -1]),
        layerStats: layout.tensors.map(() => ({
          closedForm: pick([0, Number.POSITIVE_INFINITY]),
          realised: 0,
          gradientNormSq: 1,
        })),
        computeMs: pick([1, -5]),
      });

      // A teacher action taken without the token would show below: a reset sets a version back, a removal or a
      // move takes an honest worker out (the fuzz's own sockets may join and leave by themselves), a simulate
      // adds a simulated member, an attack marks one.
      const highestVersionSeen = runs.map((r): number => r.version);
      let versionWentBack = false;
      const watchVersions = () =>
        runs.forEach((r, i) => {
          if (r.version < highestVersionSeen[i]!) versionWentBack = true;
          highestVersionSeen[i] = Math.max(highestVersionSeen[i]!, r.version);
        });
      for (let i = 0; i < MESSAGES; i++) {
        watchVersions();
        const socket = pick(sockets);
        const event = pick(EVENTS);
        const own = joined.find((j) => j.socket === socket)?.accepted;
        const target = runs.find((r) => r.id === own?.runId) ?? pick(runs);
        const payload = event === 'gradient:submit' && rng() < 0.7 ? submission(target, own?.workerId ?? 1) : garbage();
        const emit = socket.emit.bind(socket) as unknown as (event: string, ...args: unknown[]) => void;
        if (rng() < 0.5) emit(event, payload, () => undefined);
        else emit(event, payload);
        // Yield now and then so the honest worker's rounds interleave with the fuzz.
        if (i % 200 === 199) await new Promise((resolve) => setTimeout(resolve, 5));
      }

      // Still up, and every run still trains: three more honest rounds in each after the fuzz.
      watchVersions();
      const after = runs.map((r) => r.version);
      const health = await fetch(`${server.url}/api/health`);
      expect(health.status).toBe(200);
      for (const r of runs) if (r.status === 'paused') throw new Error(`the fuzz paused run ${r.id}: ${r.fault}`);
      await waitFor(
        () => runs.every((r, i) => r.version >= after[i]! + 3),
        60_000,
        'three more rounds in each run after the fuzz',
      );
      // No teacher action without the token: the same runs with the same configuration, still running, never reset,
      // the honest workers still in, nobody marked as an attacker, no simulated worker added.
      expect(server.app.runs.size).toBe(2);
      expect(runs.map((r) => JSON.stringify(r.config))).toEqual(configsBefore);
      expect(runs.map((r) => r.status)).toEqual(['running', 'running']);
      expect(versionWentBack).toBe(false);
      runs.forEach((r, i) => {
        const workers = r.summary().workers;
        expect(workers.find((w) => w.workerId === honest[i]!.assignment!.workerId)?.connected).toBe(true);
        expect(workers.filter((w) => w.attack !== null || w.simulated)).toEqual([]);
        expect(r.params.every(Number.isFinite)).toBe(true);
      });
      expect([...server.app.workers.all()].filter((w) => w.simulated)).toEqual([]);
      // No server bug on the way (a refusal is not one), a failed or refused checkpoint write included.
      expect(server.errors.map(String)).toEqual([]);

      for (const h of honest) h.stop();
      for (const socket of sockets) socket.disconnect();
      await server.app.close();
      // Every checkpoint on disk parses and validates (finite weights and momentum).
      const runsDir = join(server.dataDir, 'runs');
      for (const name of readdirSync(runsDir).filter((n) => n.endsWith('.ckpt') || n.endsWith('.ckpt.prev'))) {
        expect(() => decodeCheckpoint(readFileSync(join(runsDir, name)))).not.toThrow();
      }
    } finally {
      await server.close().catch(() => undefined);
      removeDataDir(server.dataDir);
    }
  }, 180_000);
});

// Type-level check that the list covers every client→server event: an event added to ClientToServerEvents and
// missing here makes `Uncovered` a non-empty union, and this line a compile error.
type Uncovered = Exclude<keyof ClientToServerEvents, (typeof EVENTS)[number]>;
const _covered: [Uncovered] extends [never] ? true : Uncovered = true;
void _covered;
