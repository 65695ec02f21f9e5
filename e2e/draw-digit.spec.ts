/**
 * Drawing a digit: one CPU tab trains a run until the model is decent
 * (≥ 85% on the held-out digits), then Playwright's mouse draws a clear
 * "1" and a clear "0" on the canvas, and the top guess, computed in the
 * page from the global model, names each, while the tab goes on training.
 * The run is float32, so the model gets there in the fewest rounds, and
 * relays its updates (docs/protocol.md, "Downlink"): the tab's replica,
 * kept in its Web Worker, applies each round's relayed gradient, its hash
 * checks reach the page, and the guesses come from the replica's weights.
 */
import { expect, test, type Page } from '@playwright/test';
import { createFastRun, deleteRun } from './support/admin';
import { valueAbove } from './support/pages';

/** Draws a stroke through `points` given in the canvas's 0..1 coordinates. */
async function stroke(page: Page, points: readonly [number, number][]): Promise<void> {
  // The mouse only reaches what is in the viewport: the card sits below the summary, whose height varies.
  const canvas = page.getByTestId('draw-canvas');
  await canvas.scrollIntoViewIfNeeded();
  const box = (await canvas.boundingBox())!;
  const at = ([x, y]: [number, number]) => [box.x + x * box.width, box.y + y * box.height] as const;
  await page.mouse.move(...at(points[0]!));
  await page.mouse.down();
  for (const p of points.slice(1)) await page.mouse.move(...at(p), { steps: 4 });
  await page.mouse.up();
}

async function topGuess(page: Page): Promise<number> {
  const first = page.getByTestId('draw-guess').first();
  await expect(first).toBeVisible();
  return Number(await first.getAttribute('data-digit'));
}

test('a digit drawn with the mouse gets the right top guess from the trained model', async ({ page, baseURL }) => {
  test.setTimeout(240_000);
  // Quorum of one and a short deadline: the single tab closes a round as soon as it sends.
  const runId = await createFastRun(baseURL!, {
    name: 'draw',
    scheme: 'none',
    batchSize: 64,
    learningRate: 0.1,
    evalEvery: 10,
    quorum: { fraction: 0.5, minimum: 1 },
    downlink: 'relay',
  });
  await page.goto(`/?run=${runId}&cpu`);
  await expect(page.getByTestId('draw')).toContainText('Draw a digit');
  await valueAbove(page, 'test-accuracy', 0.85, 200_000);
  // The tab keeps training while the student draws: the session runs in a Web Worker, the page stays responsive.
  await stroke(page, [
    [0.5, 0.15],
    [0.5, 0.85],
  ]);
  expect(await topGuess(page)).toBe(1);

  await page.getByTestId('draw').getByRole('button', { name: 'Clear' }).click();
  await expect(page.getByTestId('draw-guess')).toHaveCount(0);
  const ring: [number, number][] = Array.from({ length: 25 }, (_, i) => {
    const angle = (2 * Math.PI * i) / 24;
    return [0.5 + 0.22 * Math.sin(angle), 0.5 - 0.33 * Math.cos(angle)];
  });
  await stroke(page, ring);
  expect(await topGuess(page)).toBe(0);
  // The replica (in the tab's Web Worker) matched the server's hash on relayed rounds, and never had to resync.
  const downlink = page.getByTestId('downlink');
  await expect(downlink).toHaveAttribute('data-delivery', 'relay');
  expect(Number(await downlink.getAttribute('data-verified'))).toBeGreaterThan(5);
  await expect(downlink).toHaveAttribute('data-resyncs', '0');
  await page.getByTestId('draw').screenshot({ path: test.info().outputPath('draw-zero.png') });
  // The trained run would hold the dashboard's best accuracy for every later test on this server.
  await deleteRun(baseURL!, runId);
});
