/** Reading the pages the way a person does, plus the numeric data-value hooks on the headline figures. */
import { expect, type Locator, type Page } from '@playwright/test';

/** The number a headline figure carries in data-value (rounds, accuracy as a fraction, bytes). */
export async function valueOf(page: Page, testId: string): Promise<number> {
  return Number((await page.getByTestId(testId).getAttribute('data-value')) ?? 'NaN');
}

/** Waits until the figure exceeds `floor`, and returns it. */
export async function valueAbove(page: Page, testId: string, floor: number, timeout = 90_000): Promise<number> {
  await expect
    .poll(() => valueOf(page, testId), { timeout, message: `${testId} above ${floor}` })
    .toBeGreaterThan(floor);
  return valueOf(page, testId);
}

/**
 * Asserts that a chart card draws data, not just axes: recharts draws a
 * series as a `.recharts-curve` path with a non-empty `d` (lines), or as
 * `.recharts-rectangle` paths (bars), the tab's LiveChart as a
 * `.live-chart__series` path; axes and grid are lines, never these.
 */
export async function expectChartData(chart: Locator): Promise<void> {
  await expect(chart).toBeVisible();
  const name = await chart.getAttribute('data-testid');
  await expect
    .poll(
      () =>
        chart.evaluate(
          (element) =>
            [
              ...element.querySelectorAll(
                'path.recharts-curve, path.recharts-rectangle, .recharts-dot, path.live-chart__series',
              ),
            ].filter((shape) => shape.tagName !== 'path' || (shape.getAttribute('d') ?? '').length > 4).length,
        ),
      { timeout: 60_000, message: `${name} draws data` },
    )
    .toBeGreaterThan(0);
}
