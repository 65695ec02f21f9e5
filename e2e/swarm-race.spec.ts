/**
 * Issue 7 §3, the swarm under stress: four worker tabs and the teacher's
 * dashboard race two schemes (spectral ATOMO against TernGrad), both reach
 * the stated accuracy within the stated rounds and the trade-off chart draws
 * both; a tab closed mid-round does not stall its run; and the aggregator,
 * stopped and started again mid-run, resumes where it was while the tabs
 * reconnect and train on without a reload.
 *
 * This test starts its own aggregator (port 3299, its own data folder)
 * rather than using the suite's, since it restarts it.
 */
import { expect, test, type Page } from '@playwright/test';
import type { RoundMetrics, RunId, RunSummary } from '../core/protocol';
import { ADMIN_TOKEN, FAST_RUN, connect } from './support/admin';
import { ownServer } from './support/ownServer';
import { expectChartData, valueAbove, valueOf } from './support/pages';

const PORT = Number(process.env.E2E_RACE_PORT ?? 3299);
/** The bar both runs must reach... */
const TARGET_ACCURACY = 0.6;
/** ...within this many rounds (two CPU workers each, 32 digits a worker a round, the default MLP). */
const ROUND_LIMIT = 40;

/**
 * Every tab trains on the CPU backend (`?cpu`): on a 2-core CI machine all
 * tabs of a browser share one SwiftShader GPU process, and four tabs
 * compiling kernels there would take minutes. Training on WebGPU in a tab is
 * covered by e2e/swarm.spec.ts; this test is about the swarm's behaviour.
 */
const RACE = [
  { name: 'race svd', scheme: 'atomo-svd', budget: 2 },
  { name: 'race terngrad', scheme: 'terngrad' },
] as const;

const server = ownServer(PORT);

test.beforeAll(async () => {
  await server.start();
});
test.afterAll(async () => {
  await server.dispose();
});

async function runs(): Promise<RunSummary[]> {
  return (await (await fetch(`${server.baseURL}/api/runs`)).json()) as RunSummary[];
}

async function versionOf(runId: RunId): Promise<number> {
  return (await runs()).find((run) => run.runId === runId)?.version ?? -1;
}

async function historyOf(runId: RunId): Promise<RoundMetrics[]> {
  const body = (await (await fetch(`${server.baseURL}/api/runs/${runId}/metrics.json`)).json()) as {
    history: RoundMetrics[];
  };
  return body.history;
}

/**
 * The number of rounds (model version after the round) at which a run first evaluated at ≥ `bar`; null if it has not
 * yet.
 */
async function roundsToReach(runId: RunId, bar: number): Promise<number | null> {
  const reached = (await historyOf(runId)).find((m) => m.testAccuracy !== null && m.testAccuracy >= bar);
  return reached === undefined ? null : reached.version + 1;
}

/** Creates the race's runs (deleting the server's idle default run, so the charts hold only the race). */
async function createRace(): Promise<RunId[]> {
  const teacher = await connect(server.baseURL, ADMIN_TOKEN);
  try {
    const ids: RunId[] = [];
    for (const patch of RACE) {
      // Evaluating every 2 rounds gives the accuracy bar a fine grain; the 3 s deadline bounds the wait for a closed
      // tab.
      const created = await teacher.emitWithAck('run:create', { ...FAST_RUN, evalEvery: 2, ...patch });
      if (!created.ok) throw new Error(`run:create: ${created.error.message}`);
      const started = await teacher.emitWithAck('run:start', { runId: created.run.runId });
      if (!started.ok) throw new Error(`run:start: ${started.error.message}`);
      ids.push(created.run.runId);
    }
    for (const run of await runs()) {
      if (!ids.includes(run.runId)) await teacher.emitWithAck('run:delete', { runId: run.runId });
    }
    return ids;
  } finally {
    teacher.close();
  }
}

/**
 * How many runs the trade-off chart draws evaluation points for. Each run's
 * line has its own colour, and recharts 3 may render a line's dots in a
 * separate layer from its curve, so the dots are told apart by their stroke.
 */
async function tradeoffSeriesWithPoints(dashboard: Page): Promise<number> {
  return dashboard
    .getByTestId('chart-tradeoff')
    .evaluate(
      (chart) =>
        new Set([...chart.querySelectorAll('.recharts-line-dot')].map((dot) => dot.getAttribute('stroke'))).size,
    );
}

test('four tabs race two schemes; a closed tab and a server restart do not stop them', async ({ browser }) => {
  // About 2.5 minutes on an idle 2-core machine; the limit leaves room for a busy one, where the four tabs load the
  // digits slowly.
  test.setTimeout(300_000);
  const [svdRun, ternRun] = (await createRace()) as [RunId, RunId];
  const context = await browser.newContext({ baseURL: server.baseURL, viewport: { width: 1280, height: 720 } });
  try {
    const dashboard = await context.newPage();
    await dashboard.goto(`/dashboard?token=${ADMIN_TOKEN}`);
    await expect(dashboard.getByText('teacher controls on')).toBeVisible();
    // Two tabs per run, opened together: each loads the digits before it joins.
    const tabs = await Promise.all(
      [svdRun, ternRun, svdRun, ternRun].map(async (runId) => {
        const tab = await context.newPage();
        await tab.goto(`/?run=${runId}&cpu`);
        return tab;
      }),
    );
    for (const tab of tabs) await valueAbove(tab, 'worker-id', 0, 60_000);

    await test.step('the workers table shows each worker backend and its measured latency', async () => {
      const rows = dashboard.getByTestId('workers-table').locator('tbody tr[data-worker-id]');
      await expect(rows).toHaveCount(4);
      await expect(rows.locator('[data-cell="backend"][data-backend="cpu"]')).toHaveCount(4);
      await expect(rows.locator('[data-cell="latency"]', { hasText: /\d/ })).toHaveCount(4);
    });

    await test.step(`both runs reach ${TARGET_ACCURACY * 100}% test accuracy in ${ROUND_LIMIT} rounds`, async () => {
      for (const runId of [svdRun, ternRun]) {
        // Wait until the run either reached the bar or used up its rounds; then judge.
        await expect
          .poll(
            async () =>
              (await roundsToReach(runId, TARGET_ACCURACY)) !== null || (await versionOf(runId)) >= ROUND_LIMIT,
            {
              timeout: 90_000,
              message: `run ${runId} to reach the bar or ${ROUND_LIMIT} rounds`,
            },
          )
          .toBe(true);
        const rounds = await roundsToReach(runId, TARGET_ACCURACY);
        expect(rounds, `rounds run ${runId} took to reach ${TARGET_ACCURACY}`).not.toBeNull();
        expect(rounds!).toBeLessThanOrEqual(ROUND_LIMIT);
        test.info().annotations.push({
          type: 'rounds to target',
          description: `${runId}: ${TARGET_ACCURACY * 100}% after ${rounds} rounds`,
        });
      }
    });

    await test.step('the trade-off chart draws both runs', async () => {
      const chart = dashboard.getByTestId('chart-tradeoff');
      await expectChartData(chart);
      // Four tabs training flat out starve the dashboard's main thread on 2 cores: one read of its DOM took 3 to 15 s
      // here with two cores' worth of other load, and longer on CI, so the poll gets more than the 30 s default.
      await expect
        .poll(() => tradeoffSeriesWithPoints(dashboard), { timeout: 90_000, message: 'two series with points' })
        .toBe(2);
      const legend = dashboard.getByRole('list', { name: 'Runs' });
      for (const { name } of RACE) await expect(legend).toContainText(name);
    });

    await test.step('a tab closed mid-round does not stall its run', async () => {
      const leaving = tabs[2]!;
      await expect(leaving.getByTestId('phase')).toHaveAttribute('data-phase', /computing|uploading/);
      await leaving.close();
      const atClose = await versionOf(svdRun);
      await expect
        .poll(() => versionOf(svdRun), { timeout: 30_000, message: 'the run goes on' })
        .toBeGreaterThan(atClose + 2);
    });

    await test.step('the server restarts mid-run: the runs resume and the tabs reconnect by themselves', async () => {
      const open = [tabs[0]!, tabs[1]!, tabs[3]!];
      const ids = await Promise.all(open.map((tab) => valueOf(tab, 'worker-id')));
      // Versions only grow and SIGTERM checkpoints every run, so the restarted server must be at least here.
      const before = new Map<RunId, number>();
      for (const runId of [svdRun, ternRun]) before.set(runId, await versionOf(runId));
      await server.stop();
      for (const tab of open) await expect(tab.getByTestId('phase')).toContainText('reconnecting');
      const roundsBefore = await Promise.all(open.map((tab) => valueOf(tab, 'round')));
      await server.start();
      const resumed = new Map<RunId, number>();
      for (const [runId, version] of before) {
        resumed.set(runId, await versionOf(runId));
        expect(resumed.get(runId), `run ${runId} resumed from its checkpoint, not from 0`).toBeGreaterThanOrEqual(
          version,
        );
      }
      // No reload: the tabs' own sockets reconnect, rejoin as the same workers, and train on.
      for (const [i, tab] of open.entries()) {
        await valueAbove(tab, 'round', roundsBefore[i]!, 60_000);
        expect(await valueOf(tab, 'worker-id')).toBe(ids[i]);
      }
      for (const [runId, version] of resumed)
        await expect.poll(() => versionOf(runId), { timeout: 30_000 }).toBeGreaterThan(version);
    });
  } finally {
    await context.close();
  }
});
