/**
 * The class lesson end to end: three worker tabs and the teacher's dashboard
 * on one run. Rounds advance, accuracy and bytes rise on both views, every
 * chart draws data; the teacher creates a second run and moves a worker
 * there; a tab closed mid-round does not stop the run, and reopened it
 * rejoins as the same worker. Screenshots of both pages, at 1280×720 and at
 * phone width (where neither may be wider than the screen), are saved with the test's output.
 */
import { expect, test, type Page } from '@playwright/test';
import { ADMIN_TOKEN, createFastRun } from './support/admin';
import { expectChartData, valueAbove, valueOf } from './support/pages';

const WORKER_CHARTS = ['chart-loss', 'chart-bytes', 'chart-variance', 'chart-time'];
const DASHBOARD_CHARTS = ['chart-tradeoff', 'chart-accuracy', 'chart-loss', 'chart-variance', 'chart-bytes'];

async function runRound(dashboard: Page, runId: string): Promise<number> {
  return Number(
    await dashboard.getByTestId('runs-table').locator(`tr[data-run-id="${runId}"] [data-cell="round"]`).textContent(),
  );
}

/**
 * The page at 1280×720 and at phone width, saved with the test's output; at
 * phone width nothing may stick out sideways (wide tables scroll in their cards).
 */
async function screenshots(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: test.info().outputPath(`${name}-1280x720.png`) });
  await page.setViewportSize({ width: 390, height: 844 });
  await expect
    .poll(() => page.evaluate(() => document.documentElement.scrollWidth), { message: `${name} page width at 390 px` })
    .toBeLessThanOrEqual(390);
  await page.screenshot({ path: test.info().outputPath(`${name}-phone.png`) });
  await page.setViewportSize({ width: 1280, height: 720 });
}

/**
 * One tab trains on WebGPU (`?webgpu`, else it would time both backends and
 * pick the CPU, faster than SwiftShader), two are sent to the CPU backend
 * with `?cpu`: on this 2-core machine every tab of a browser shares one
 * SwiftShader GPU process, and three tabs compiling and running kernels in
 * it take minutes.
 */
const TAB_QUERIES = ['&webgpu', '&cpu', '&cpu'];

test('three worker tabs and the dashboard: the class trains and the teacher steers it', async ({
  browser,
  baseURL,
}) => {
  test.setTimeout(300_000);
  // Evaluating every round makes "accuracy rises" visible after two rounds instead of four.
  const runId = await createFastRun(baseURL!, { name: 'class', scheme: 'atomo-svd', budget: 2, evalEvery: 1 });
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const workers: Page[] = [];
  for (const [index, query] of TAB_QUERIES.entries()) {
    const page = await context.newPage();
    await page.goto(`/?run=${runId}${query}`);
    workers.push(page);
    // The WebGPU tab's first round compiles every kernel on SwiftShader: alone on the machine
    // (the run's quorum is one) that takes seconds; beside two CPU tabs training flat out, minutes.
    if (index === 0) await valueAbove(page, 'bytes-up', 0, 120_000);
  }
  const dashboard = await context.newPage();
  await dashboard.goto(`/dashboard?token=${ADMIN_TOKEN}`);
  await expect(dashboard.getByText('teacher controls on')).toBeVisible();
  // The token leaves the address bar once stored for the session.
  expect(new URL(dashboard.url()).searchParams.has('token')).toBe(false);

  // Three distinct workers in the class run, on the backend each was given.
  await expect(workers[0]!.getByTestId('backend')).toHaveAttribute('data-backend', 'webgpu');
  for (const page of workers.slice(1))
    await expect(page.getByTestId('backend')).toContainText('CPU backend forced by ?cpu');
  for (const page of workers) await expect(page.getByTestId('run-name')).toContainText('class');
  const ids = await Promise.all(workers.map((page) => valueAbove(page, 'worker-id', 0, 30_000)));
  expect(new Set(ids).size).toBe(3);

  // Rounds advance, accuracy and bytes rise, on a worker and on the dashboard. Both views are read
  // once before either is awaited to rise: read late, near the plateau, accuracy may not rise again.
  const views = [workers[1]!, dashboard];
  const first: { round: number; bytes: number; accuracy: number }[] = [];
  for (const view of views) {
    first.push({
      round: await valueAbove(view, 'round', 0),
      bytes: await valueAbove(view, 'bytes-up', 0),
      accuracy: await valueAbove(view, 'test-accuracy', 0),
    });
  }
  for (const [index, view] of views.entries()) {
    await valueAbove(view, 'round', first[index]!.round);
    await valueAbove(view, 'bytes-up', first[index]!.bytes);
    await valueAbove(view, 'test-accuracy', first[index]!.accuracy);
  }
  for (const page of workers.slice(1)) await valueAbove(page, 'bytes-up', 0);

  for (const id of DASHBOARD_CHARTS) await expectChartData(dashboard.getByTestId(id));
  await expect(dashboard.getByTestId('join-qr')).toBeVisible();
  const classRows = dashboard.getByTestId('workers-table').locator(`tbody tr[data-run-id="${runId}"]`);
  await expect(classRows).toHaveCount(3);
  // The workers table shows each tab's backend as the tab reported it.
  await expect(classRows.locator('[data-cell="backend"][data-backend="webgpu"]')).toHaveCount(1);
  await expect(classRows.locator('[data-cell="backend"][data-backend="cpu"]')).toHaveCount(2);
  await screenshots(dashboard, 'dashboard');

  // The teacher creates a second run from the form and moves the third worker into it.
  const form = dashboard.getByRole('form', { name: 'Create a run' });
  await form.getByLabel('Name').fill('second');
  await form.getByLabel('Scheme').selectOption('qsgd');
  await form.getByRole('button', { name: 'Create run' }).click();
  const secondRow = dashboard.getByTestId('runs-table').locator('tbody tr', { hasText: 'second' });
  await expect(secondRow).toHaveAttribute('data-status', 'running');
  const secondRunId = (await secondRow.getAttribute('data-run-id'))!;
  const moved = ids[2]!;
  await dashboard.getByLabel(`Run of worker ${moved}`).selectOption(secondRunId);
  await expect(workers[2]!.getByTestId('run-name')).toContainText('second');
  await expect(workers[2]!.getByTestId('scheme')).toContainText('QSGD');
  await expect(dashboard.getByTestId('workers-table').locator(`tr[data-worker-id="${moved}"]`)).toHaveAttribute(
    'data-run-id',
    secondRunId,
  );
  await valueAbove(workers[2]!, 'bytes-up', await valueOf(workers[2]!, 'bytes-up'));

  // Closing a tab in the middle of a round: the run goes on without it.
  const leaving = workers[1]!;
  const leavingId = ids[1]!;
  await expect(leaving.getByTestId('phase')).toHaveAttribute('data-phase', /computing|uploading/);
  await leaving.close();
  const roundAtClose = await runRound(dashboard, runId);
  await expect.poll(() => runRound(dashboard, runId), { timeout: 60_000 }).toBeGreaterThan(roundAtClose + 1);

  // Reopened, the tab comes back as the same worker and trains again.
  const reopened = await context.newPage();
  await reopened.goto(`/?run=${runId}${TAB_QUERIES[1]}`);
  await expect(reopened.getByTestId('worker-id')).toHaveAttribute('data-value', String(leavingId));
  await valueAbove(reopened, 'bytes-up', 0);

  // The WebGPU tab has trained on beside the others, and its charts and digits show it.
  for (const id of WORKER_CHARTS) await expectChartData(workers[0]!.getByTestId(id));
  await expect(workers[0]!.getByTestId('digits').locator('.digit--right, .digit--wrong')).toHaveCount(8);
  await screenshots(workers[0]!, 'worker');
  await context.close();
});
