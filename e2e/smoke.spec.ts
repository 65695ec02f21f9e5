import { expect, test } from '@playwright/test';

test('the worker page opens and reports a WebGPU adapter', async ({ page }) => {
  await page.goto('/');
  await expect(page.getByRole('heading', { name: 'atomo-swarm' })).toBeVisible();
  const backend = page.getByTestId('backend');
  await expect(backend).toHaveAttribute('data-backend', 'webgpu');
  await expect(backend).toContainText('WebGPU:');
  await page.screenshot({ path: test.info().outputPath('worker-page.png') });
});
