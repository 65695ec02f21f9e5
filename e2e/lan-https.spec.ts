/**
 * A student's own device in the classroom: it reaches the teacher's laptop
 * by a host name that is not localhost (Chromium maps classroom.test to
 * 127.0.0.1), so the page is a secure context only because the server was
 * started with --https. The student clicks through the certificate warning
 * (ignoreHTTPSErrors) and the tab trains on WebGPU. The server serves the
 * certificate it generated in its data folder, and /api/join reports https.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { chromium, expect, test } from '@playwright/test';
import type { JoinInfo } from '../core/protocol';
import { chromiumLaunchOptions } from '../scripts/chromium';
import { createFastRun } from './support/admin';
import { ownServer } from './support/ownServer';
import { valueAbove } from './support/pages';

const PORT = Number(process.env.E2E_PORT ?? 3199) + 2;
const server = ownServer(PORT, { https: true });

test.beforeAll(async () => {
  test.setTimeout(90_000);
  await server.start();
});
test.afterAll(() => server.dispose());

/** The SHA-256 fingerprint of the certificate the server presents. */
function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, servername: 'localhost', rejectUnauthorized: false }, () => {
      resolve(socket.getPeerX509Certificate()!.fingerprint256);
      socket.end();
    });
    socket.on('error', reject);
  });
}

test('a student device opens the teacher’s --https server by host name and trains on WebGPU', async () => {
  test.setTimeout(240_000);
  // The certificate made on first use, kept in the data folder, is the one served; the banner tells the teacher what
  // students will see.
  const certificate = new X509Certificate(readFileSync(join(server.dataDir, 'tls', 'cert.pem')));
  expect(await servedFingerprint(PORT)).toBe(certificate.fingerprint256);
  expect(certificate.subjectAltName).toContain('DNS:localhost');
  expect(server.output()).toMatch(/certificate warning once per device/);
  const join_ = (await (await fetchInsecure(`${server.baseURL}/api/join`)).json()) as JoinInfo;
  expect(join_.scheme).toBe('https');
  expect(join_.port).toBe(PORT);
  for (const url of join_.urls) expect(server.output()).toContain(url);

  const runId = await createFastRun(server.baseURL, { name: 'lan', scheme: 'atomo-svd', budget: 2 });
  const options = chromiumLaunchOptions();
  const browser = await chromium.launch({
    ...options,
    args: [...options.args, '--host-resolver-rules=MAP classroom.test 127.0.0.1'],
  });
  try {
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    // `?webgpu`: on SwiftShader a timed tab would pick the CPU; here the point is that WebGPU exists at all.
    await page.goto(`https://classroom.test:${PORT}/?run=${runId}&webgpu`);
    expect(await page.evaluate(() => [location.hostname, window.isSecureContext])).toEqual(['classroom.test', true]);
    const backend = page.getByTestId('backend');
    await expect(backend).toHaveAttribute('data-backend', 'webgpu', { timeout: 60_000 });
    await valueAbove(page, 'round', 1, 180_000);
    await valueAbove(page, 'bytes-up', 0);
    await expect(backend).toHaveAttribute('data-backend', 'webgpu');
    await page.screenshot({ path: test.info().outputPath('worker-over-https.png') });
  } finally {
    await browser.close();
  }
});

/** fetch that accepts the server's self-signed certificate (Node's fetch has no switch for it). */
async function fetchInsecure(url: string): Promise<{ json(): Promise<unknown> }> {
  const { get } = await import('node:https');
  return new Promise((resolve, reject) => {
    get(url, { rejectUnauthorized: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ json: async () => JSON.parse(body) as unknown }));
    }).on('error', reject);
  });
}
