import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from '@playwright/test';
import { SERVER_COMMAND } from './scripts/startCommand';
import { chromiumLaunchOptions } from './scripts/chromium';

const port = Number(process.env.E2E_PORT ?? 3199);

export default defineConfig({
  testDir: 'e2e',
  timeout: 120_000,
  expect: { timeout: 30_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  reporter: [['list']],
  outputDir: 'test-results',
  use: {
    baseURL: `http://localhost:${port}`,
    screenshot: 'only-on-failure',
    trace: { mode: 'retain-on-failure', screenshots: false },
    launchOptions: chromiumLaunchOptions(),
  },
  webServer: {
    command: SERVER_COMMAND,
    url: `http://localhost:${port}/api/health`,
    reuseExistingServer: false,
    timeout: 60_000,
    env: {
      PORT: String(port),
      ADMIN_TOKEN: 'e2e-admin-token',
      DATA_DIR: join(tmpdir(), `atomo-e2e-${process.pid}`),
    },
  },
});
