/**
 * 简体中文: a browser whose language is Chinese gets both pages in Chinese,
 * with no English left (every text node and label, once the pages show live
 * data: charts, tables, digits). The same scan of the English pages finds
 * plenty, which shows the scan can fail. The header's switcher changes the
 * language and the choice survives a reload.
 */
import { expect, test, type Browser, type Page } from '@playwright/test';
import { ADMIN_TOKEN, createFastRun, listRuns } from './support/admin';
import { expectChartData, valueAbove } from './support/pages';
import { untranslatedText } from './support/untranslated';

async function openWorker(browser: Browser, locale: string, runId: string): Promise<Page> {
  const context = await browser.newContext({ locale, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  // The CPU backend: the quickest to a first round on a shared machine; the WebGPU badge is covered by the other specs.
  await page.goto(`/?run=${runId}&cpu`);
  return page;
}

test('the Chinese pages show no untranslated English, the English ones are scanned the same way', async ({
  browser,
  baseURL,
}) => {
  test.setTimeout(300_000);
  const runId = await createFastRun(baseURL!, { name: 'i18n run', scheme: 'atomo-svd', budget: 2, evalEvery: 1 });
  const zhWorker = await openWorker(browser, 'zh-CN', runId);
  await expect(zhWorker.locator('html')).toHaveAttribute('lang', 'zh-CN');
  await valueAbove(zhWorker, 'round', 1);
  await valueAbove(zhWorker, 'test-accuracy', 0);
  for (const chart of ['chart-loss', 'chart-bytes', 'chart-variance', 'chart-time'])
    await expectChartData(zhWorker.getByTestId(chart));
  await expect(zhWorker.getByTestId('digits').locator('.digit__guess').first()).not.toHaveText('?');
  // The tab's own gradient, layer by layer: spectral ATOMO measures the indicator every round where it reads g, every
  // 5th round on dense1's factored route, and the tab shows each layer's last measurement.
  const ownLayers = zhWorker.getByTestId('worker-layers');
  await expect(ownLayers.getByTestId('layer-indicator')).toHaveCount(4);
  await expect(ownLayers.getByTestId('layer-indicator').first()).toHaveText(/^\d/);
  await expect(ownLayers.getByTestId('layer-sent-as').first()).toHaveText('谱原子');
  expect(await untranslatedText(zhWorker), 'English on the Chinese worker page').toEqual([]);

  const zhDashboard = await zhWorker.context().newPage();
  await zhDashboard.goto(`/dashboard?token=${ADMIN_TOKEN}`);
  await expect(zhDashboard.getByTestId('workers-table').locator('tbody tr[data-worker-id]').first()).toBeVisible();
  for (const chart of ['chart-tradeoff', 'chart-accuracy', 'chart-bytes'])
    await expectChartData(zhDashboard.getByTestId(chart));
  // The per-layer card, for this run: the indicator over rounds, how each layer was sent, the split of its bytes.
  await zhDashboard.getByTestId('layer-choices-run').selectOption(runId);
  await expectChartData(zhDashboard.getByTestId('chart-indicator'));
  await expect
    .poll(async () => Number(await zhDashboard.getByTestId('chart-sent-as').getAttribute('data-points')))
    .toBeGreaterThan(0);
  await expect(zhDashboard.getByTestId('layers-table').getByTestId('layer-indicator').first()).toHaveText(/^\d/);
  const runNames = (await listRuns(baseURL!)).map((run) => run.config.name);
  expect(await untranslatedText(zhDashboard, runNames), 'English on the Chinese dashboard').toEqual([]);
  await zhDashboard.screenshot({ path: test.info().outputPath('dashboard-zh.png'), fullPage: true });
  await zhWorker.screenshot({ path: test.info().outputPath('worker-zh.png'), fullPage: true });

  // The scan is not blind: the same pages in English are full of English words.
  const enWorker = await openWorker(browser, 'en-US', runId);
  await valueAbove(enWorker, 'round', 1);
  await enWorker.screenshot({ path: test.info().outputPath('worker-en.png'), fullPage: true });
  const english = await untranslatedText(enWorker);
  expect(english.map((f) => f.text)).toEqual(expect.arrayContaining(['Minibatch loss', 'Test accuracy']));
  await enWorker.context().close();
  await zhWorker.context().close();
});

test('the header switches the language, and the choice is remembered', async ({ browser }) => {
  const context = await browser.newContext({ locale: 'en-US' });
  const page = await context.newPage();
  await page.goto('/dashboard');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('atomo-swarm · class dashboard');
  await page.getByTestId('language').selectOption('zh-CN');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('atomo-swarm · 课堂仪表盘');
  await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
  await page.reload();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('atomo-swarm · 课堂仪表盘');
  await page.getByTestId('language').selectOption('en');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('atomo-swarm · class dashboard');
  await context.close();
});
