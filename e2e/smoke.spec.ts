import { expect, test } from '@playwright/test';
import { valueAbove } from './support/pages';

// `?webgpu`: on SwiftShader the tab would time both backends and train on the faster, the CPU (long-tasks.spec.ts
// checks that).
test('the worker page opens, reports a WebGPU adapter and trains on it', async ({ page }) => {
  await page.goto('/?webgpu');
  await expect(page.getByRole('heading', { name: 'atomo-swarm' })).toBeVisible();
  const backend = page.getByTestId('backend');
  await expect(backend).toHaveAttribute('data-backend', 'webgpu');
  await expect(backend).toContainText('WebGPU:');
  await expect(page.getByTestId('calibration')).toContainText('forced by ?webgpu');
  // Rounds of the default run close on this tab's gradients alone, compressed on the WebGPU device.
  await valueAbove(page, 'round', 0);
  await valueAbove(page, 'bytes-up', 0);
  await expect(backend).toHaveAttribute('data-backend', 'webgpu');
  await page.screenshot({ path: test.info().outputPath('worker-page.png') });
});
