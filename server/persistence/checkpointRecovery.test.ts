/**
 * A damaged checkpoint cannot poison a restart: it is moved aside with a
 * clear log line and the run restarts from its previous checkpoint.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeCheckpoint } from './checkpoint';
import { loadTestData, makeDataDir, removeDataDir, startServer, waitFor } from '../testing/harness';
import { HeadlessTab } from '../../client/net/headlessTab';

describe('checkpoint recovery', () => {
  const dataDir = makeDataDir();
  afterAll(() => removeDataDir(dataDir));

  it('moves a poisoned checkpoint aside and restarts from the previous one', async () => {
    const { train } = await loadTestData();
    const first = await startServer({ dataDir, defaultRun: false });
    const run = first.app.runs.create({ scheme: 'terngrad', batchSize: 8, maxRounds: 6, evalEvery: 100 }, 'running');
    const worker = new HeadlessTab({ url: first.url, train, runId: run.id });
    await worker.start();
    await waitFor(() => run.status === 'finished', 30_000, 'the run to finish');
    worker.stop();
    await first.close();

    const runsDir = join(dataDir, 'runs');
    const current = join(runsDir, `${run.id}.ckpt`);
    const previous = decodeCheckpoint(readFileSync(`${current}.prev`));
    const latest = decodeCheckpoint(readFileSync(current));
    expect(previous.snapshot.version).toBeLessThanOrEqual(latest.snapshot.version);
    // Poison the latest: an Inf in the momentum, as an overflowing update would have stored it.
    const bytes = readFileSync(current);
    bytes.writeFloatLE(Number.POSITIVE_INFINITY, bytes.length - 8);
    writeFileSync(current, bytes);

    const second = await startServer({ dataDir, defaultRun: false });
    try {
      const restored = second.app.runs.get(run.id);
      expect(restored.version).toBe(previous.snapshot.version);
      expect(Buffer.from(restored.params.buffer)).toEqual(Buffer.from(previous.snapshot.params.buffer));
      const log = second.errors.map((e) => String((e as Error).message)).join('\n');
      expect(log).toMatch(
        new RegExp(
          `checkpoint ${run.id}\\.ckpt is damaged ` +
            `\\(checkpoint momentum are not finite at parameter \\d+\\); moved aside`,
        ),
      );
      expect(log).toContain(`run ${run.id} restarts from its previous checkpoint`);
      expect(readdirSync(runsDir).some((name) => name.startsWith(`${run.id}.ckpt.bad-`))).toBe(true);
    } finally {
      await second.close();
    }
  });

  it('moves a damaged workers.json aside: the server starts, and workers join as new ones', async () => {
    const dir = makeDataDir();
    try {
      writeFileSync(
        join(dir, 'workers.json'),
        JSON.stringify({ nextId: 2, workers: [{ workerId: 1, keyHash: 'not-a-hash', name: 'w', runId: null }] }),
      );
      const server = await startServer({ dataDir: dir });
      try {
        expect(server.errors.map(String)).toEqual([
          expect.stringMatching(
            /workers\.json is damaged \(workers\.json workers\.0\.keyHash: .*\); moved aside to .*workers\.json\.bad-/,
          ),
        ]);
        expect(server.app.workers.size).toBe(0);
        expect(readdirSync(dir).some((name) => name.startsWith('workers.json.bad-'))).toBe(true);
      } finally {
        await server.close();
      }
    } finally {
      removeDataDir(dir);
    }
  });
});
