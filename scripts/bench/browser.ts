/**
 * Runs a benchmark page in headless Chromium with WebGPU and returns what the
 * page reports. The page is served by Vite in dev mode (no build needed), and
 * publishes its result as `window.benchResult` (or `window.benchError`).
 */
import { chromium } from '@playwright/test';
import { createServer } from 'vite';
import type { BrowserBenchName } from '../../client/bench/page';
import { chromiumLaunchOptions } from '../chromium';

export interface BrowserBenchOptions {
  /** Which benchmark client/bench/index.html runs. */
  readonly bench: BrowserBenchName;
  /** Query string passed to the page (without '?'). */
  readonly query?: string;
  readonly timeoutMs?: number;
  /** 'native' to use the machine's GPU instead of SwiftShader. */
  readonly gpu?: 'swiftshader' | 'native';
}

/** Serves client/ with Vite, opens the benchmark page in Chromium and resolves with its `benchResult`. */
export async function runBrowserBench<T>(options: BrowserBenchOptions): Promise<T> {
  const vite = await createServer({
    configFile: 'vite.config.ts',
    logLevel: 'warn',
    server: { port: 0, host: '127.0.0.1' },
    // Scan the benchmark pages up front: otherwise Vite discovers TF.js on
    // first load, re-optimises and reloads the page mid-benchmark.
    optimizeDeps: { entries: ['bench/index.html', 'bench/*.ts', 'index.html'] },
  });
  await vite.listen();
  const address = vite.httpServer?.address();
  if (address === null || address === undefined || typeof address === 'string')
    throw new Error('Vite did not report a port');
  const browser = await chromium.launch(chromiumLaunchOptions(options.gpu ?? 'swiftshader'));
  try {
    const page = await browser.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' || message.text().startsWith('[bench]')) console.log(`  page: ${message.text()}`);
    });
    page.on('pageerror', (error) => console.log(`  page error: ${error.message}`));
    const query = options.query ? `&${options.query}` : '';
    const url = `http://127.0.0.1:${address.port}/bench/?bench=${options.bench}${query}`;
    await page.goto(url);
    await page.waitForFunction(() => 'benchResult' in window || 'benchError' in window, undefined, {
      timeout: options.timeoutMs ?? 600_000,
      polling: 500,
    });
    const outcome = await page.evaluate(() => {
      const w = window as unknown as { benchResult?: unknown; benchError?: string };
      return { result: w.benchResult, error: w.benchError };
    });
    if (outcome.error !== undefined) throw new Error(`benchmark page failed: ${outcome.error}`);
    return outcome.result as T;
  } finally {
    await browser.close();
    await vite.close();
  }
}
