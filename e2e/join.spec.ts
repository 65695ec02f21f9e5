/**
 * The join card points students at this machine's network address, not at
 * localhost, with the scheme and port the server really serves, and its QR
 * code says exactly that URL (decoded with jsQR from the canvas pixels).
 */
import { expect, test } from '@playwright/test';
import jsQR from 'jsqr';
import type { JoinInfo } from '../core/protocol';

test('the join card shows a LAN URL and its QR code decodes to it', async ({ page, request, baseURL }) => {
  const info = (await (await request.get('/api/join')).json()) as JoinInfo;
  const port = Number(new URL(baseURL!).port);
  expect(info.scheme).toBe('http');
  expect(info.port).toBe(port);
  // The machine running the tests has a network interface; its address is what students would open.
  expect(info.addresses.length, 'this machine reports a LAN address').toBeGreaterThan(0);

  await page.goto('/dashboard');
  const link = page.getByTestId('join-url');
  await expect(link).toHaveAttribute('href', info.urls[0]!);
  const url = (await link.getAttribute('href'))!;
  expect(new URL(url).hostname).not.toMatch(/^(localhost|127\.0\.0\.1|\[::1\])$/);
  expect(new URL(url).port).toBe(String(port));
  // Over plain http, the card warns that students' devices will have no WebGPU.
  await expect(page.getByTestId('join-warning')).toContainText('--https');

  const qr = page.getByTestId('join-qr');
  await expect(qr).toHaveAttribute('data-url', url);
  const pixels = await qr.evaluate((canvas: HTMLCanvasElement) => {
    const context = canvas.getContext('2d')!;
    const image = context.getImageData(0, 0, canvas.width, canvas.height);
    return { data: [...image.data], width: image.width, height: image.height };
  });
  const decoded = jsQR(Uint8ClampedArray.from(pixels.data), pixels.width, pixels.height);
  expect(decoded?.data).toBe(url);
});

test('projector mode shows the join code and the trade-off chart only, in large type', async ({ page }) => {
  await page.setViewportSize({ width: 1600, height: 900 });
  await page.goto('/dashboard?projector');
  const projector = page.getByTestId('projector');
  await expect(projector.getByTestId('join-qr')).toBeVisible();
  await expect(projector.getByTestId('chart-tradeoff')).toBeVisible();
  await expect(page.getByTestId('runs-table')).toHaveCount(0);
  await expect(page.getByTestId('chart-accuracy')).toHaveCount(0);
  // Large type: the join URL reads at least twice the normal body size.
  const size = await page.getByTestId('join-url').evaluate((el) => parseFloat(getComputedStyle(el).fontSize));
  expect(size).toBeGreaterThanOrEqual(30);
  await page.screenshot({ path: test.info().outputPath('projector.png') });
  await page.getByTestId('projector-toggle').click();
  await expect(page.getByTestId('runs-table')).toBeVisible();
});
