/**
 * Restart: the server stops mid-run and starts again on the same data dir;
 * the run resumes at the same version with identical weights and history,
 * and the workers rejoin as themselves and carry on.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { loadTestData, makeDataDir, removeDataDir, startServer, waitFor } from '../testing/harness';
import { HeadlessTab } from '../../client/net/headlessTab';
import { DEFAULT_RUN_ID } from '../app';

describe('restart', () => {
  const dataDir = makeDataDir();
  afterAll(() => removeDataDir(dataDir));

  it('resumes every run from its checkpoint and the workers continue', async () => {
    const { train } = await loadTestData();
    const config = { scheme: 'terngrad', batchSize: 8, maxRounds: 12, evalEvery: 3 } as const;
    const first = await startServer({ dataDir, defaultRun: config });
    const workers = [new HeadlessTab({ url: first.url, train }), new HeadlessTab({ url: first.url, train })];
    const ids = [];
    for (const w of workers) ids.push((await w.start()).workerId);
    const run = first.app.runs.get(DEFAULT_RUN_ID);
    await waitFor(() => run.version >= 4, 30_000, 'version 4');
    await first.close();
    const version = run.version;
    const params = Buffer.from(run.params.slice().buffer);
    const history = JSON.stringify(run.history);
    const { traffic, workers: members } = run.summary();
    expect(version).toBeLessThan(config.maxRounds);
    expect(traffic.gradientUp).toBeGreaterThan(0);

    const second = await startServer({ dataDir, port: first.port, defaultRun: config });
    const resumed = second.app.runs.get(DEFAULT_RUN_ID);
    expect(resumed.version).toBe(version);
    // The frames counted so far, the run's and each worker's, go on from where they were.
    expect(resumed.summary().traffic).toEqual(traffic);
    expect(resumed.summary().workers.map((w) => w.traffic)).toEqual(members.map((w) => w.traffic));
    expect(Buffer.from(resumed.params.slice().buffer).equals(params)).toBe(true);
    expect(JSON.stringify(resumed.history)).toBe(history);
    expect(resumed.status).toBe('running');

    // The workers' clients reconnect by themselves and rejoin with their keys.
    await waitFor(() => resumed.status === 'finished', 60_000, 'the resumed run to finish');
    expect(workers.map((w) => w.assignment?.workerId)).toEqual(ids);
    expect(resumed.history.map((m) => m.version)).toEqual([...Array(config.maxRounds).keys()]);
    // The first resumed round may open before the second worker is back; both train by the end.
    expect(resumed.history.at(-1)?.contributors).toBe(2);
    for (const w of workers) w.stop();
    await second.close();
    expect([...first.errors, ...second.errors]).toEqual([]);
  });
});
