/**
 * A browser launched without WebGPU (no --enable-unsafe-webgpu, so Chromium
 * offers no adapter on this machine) trains through the CPU backend and says
 * so on screen.
 */
import { chromium, expect, test } from '@playwright/test';
import { chromiumLaunchOptions } from '../scripts/chromium';
import { createFastRun } from './support/admin';
import { expectChartData, valueAbove } from './support/pages';

test('a tab without WebGPU trains on the CPU fallback and says why', async ({ baseURL }) => {
  const withGpu = chromiumLaunchOptions();
  const browser = await chromium.launch({
    ...withGpu,
    args: [...withGpu.args.filter((arg) => !arg.includes('webgpu')), '--disable-gpu'],
  });
  try {
    const runId = await createFastRun(baseURL!, { name: 'cpu tab', scheme: 'terngrad' });
    const page = await browser.newPage({ baseURL: baseURL!, viewport: { width: 1280, height: 720 } });
    await page.goto(`/?run=${runId}`);
    const backend = page.getByTestId('backend');
    await expect(backend).toHaveAttribute('data-backend', 'cpu');
    await expect(backend).toContainText('CPU fallback:');
    await expect(backend).toContainText(/WebGPU/);
    await valueAbove(page, 'bytes-up', 0);
    await valueAbove(page, 'round', 1);
    await expectChartData(page.getByTestId('chart-loss'));
    await page.screenshot({ path: test.info().outputPath('worker-cpu-fallback.png') });
  } finally {
    await browser.close();
  }
});
