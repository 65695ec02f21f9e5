/**
 * PNG copies of the SVG plots, for viewers that do not show SVG: the system
 * Chromium (scripts/chromium.ts) screenshots each SVG at 2× scale. Optional:
 * where no Chromium starts, the report keeps the SVGs only.
 */
import { chromium } from '@playwright/test';
import { chromiumLaunchOptions } from '../chromium';

/** Renders each SVG to PNG bytes; null when no browser could be launched. */
export async function svgsToPngs(svgs: readonly string[]): Promise<Buffer[] | null> {
  let browser;
  try {
    browser = await chromium.launch(chromiumLaunchOptions());
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    console.warn(`no Chromium for the PNG plots (${reason}); keeping SVG only`);
    return null;
  }
  try {
    const page = await browser.newPage({ deviceScaleFactor: 2 });
    const pngs: Buffer[] = [];
    for (const svg of svgs) {
      await page.setContent(`<!doctype html><body style="margin:0;background:white">${svg}</body>`);
      pngs.push(await page.locator('svg').first().screenshot());
    }
    return pngs;
  } finally {
    await browser.close();
  }
}
