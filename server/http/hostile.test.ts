/**
 * Regression tests for the two requests that brought the whole aggregator
 * down: a malformed escape in a URL, and a student who sends
 * finite-but-huge spectral gradients until the momentum overflows. Plus the
 * rest of the hostile-URL list: traversal in every encoding, NUL bytes, a
 * 20 kB path, odd methods and headers. None may stop the server or leak a
 * file outside the built client.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeLayer } from '../../core/codec';
import type { GradientSubmission } from '../../core/protocol';
import { makeDataDir, removeDataDir, startServer, type TestServer } from '../testing/harness';
import { joinRaw } from '../testing/rawWorker';

/** Sends raw bytes as one HTTP/1.1 request and resolves with the whole raw response (the server closes it). */
function rawRequest(port: number, request: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ECONNRESET' ? resolve(Buffer.concat(chunks).toString('latin1')) : reject(error),
    );
    socket.setTimeout(10_000, () => {
      socket.destroy();
      reject(new Error('no answer'));
    });
    socket.write(request);
  });
}

const get = (port: number, target: string, headers = '', method = 'GET') =>
  rawRequest(
    port,
    Buffer.from(`${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${headers}\r\n`, 'latin1'),
  );

const statusOf = (response: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1] ?? 0);

/** A file next to the client directory: any response containing this string leaked it. */
const CANARY = 'CANARY-outside-the-built-client-7f3a';

const TRAVERSALS = [
  '/../secret.txt',
  '/..%2fsecret.txt',
  '/..%2Fsecret.txt',
  '/%2e%2e/secret.txt',
  '/%2e%2e%2fsecret.txt',
  '/..%5csecret.txt',
  '/..\\secret.txt',
  '/%252e%252e/secret.txt',
  '/..%c0%afsecret.txt',
  '/..%c1%9csecret.txt',
  '/assets/../../secret.txt',
  '/assets/%2e%2e/%2e%2e/secret.txt',
  '/....//secret.txt',
  '//secret.txt',
  '/%2fsecret.txt',
  '/.%2e/secret.txt',
  '/%u002e%u002e/secret.txt',
  '/index.html/../../secret.txt',
];

const MALFORMED = [
  '/%ZZ',
  '/%',
  '/%E0%A4%A',
  '/%ff%fe',
  '//%ZZ',
  '/api/%ZZ',
  '/api/runs/%ZZ/metrics.json',
  '/dashboard?token=%ZZ',
  '/?%ZZ=%ZZ',
  '/%00',
  '/index.html%00.js',
  '/a%00b',
  '/%C0%80',
];

describe('hostile URLs', () => {
  let server: TestServer;
  let dir: string;

  beforeAll(async () => {
    dir = makeDataDir();
    const clientDir = join(dir, 'client');
    mkdirSync(join(clientDir, 'assets'), { recursive: true });
    writeFileSync(join(clientDir, 'index.html'), '<!doctype html><title>app</title>');
    writeFileSync(join(clientDir, 'assets', 'app.js'), 'console.log(1)');
    writeFileSync(join(dir, 'secret.txt'), CANARY);
    server = await startServer({ dataDir: join(dir, 'data'), clientDir, defaultRun: false });
  });
  afterAll(async () => {
    await server.close();
    removeDataDir(dir);
  });

  const healthy = async () => expect(statusOf(await get(server.port, '/api/health'))).toBe(200);

  it('a malformed escape (a crash found once) is answered and the server stays up', async () => {
    const response = await get(server.port, '/%ZZ');
    expect(statusOf(response)).toBeGreaterThanOrEqual(200);
    expect(response).not.toContain(CANARY);
    await healthy();
  });

  it.each([...MALFORMED, ...TRAVERSALS])('%s: answered, no file outside the client', async (target) => {
    const response = await get(server.port, target);
    const status = statusOf(response);
    // Node's parser may refuse a target outright (400); otherwise 404 or the app's index.html, never a crash.
    expect([200, 400, 404]).toContain(status);
    expect(response).not.toContain(CANARY);
    if (status === 200) expect(response).toContain('<title>app</title>');
    await healthy();
  });

  it('a NUL byte and control characters in the raw request line are refused', async () => {
    for (const target of ['/\0', '/index.html\0', '/\x01\x02', '/ /']) {
      const response = await get(server.port, target);
      expect(response).not.toContain(CANARY);
    }
    await healthy();
  });

  it('a 20 kB path is refused without a lookup', async () => {
    const response = await get(server.port, `/${'a/'.repeat(10_000)}`);
    expect([414, 431, 400]).toContain(statusOf(response));
    await healthy();
  });

  it('odd methods get 405 (or the parser refuses them), HEAD gets headers only', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'PROPFIND', 'FOO']) {
      const status = statusOf(await get(server.port, '/index.html', '', method));
      expect([400, 405]).toContain(status);
    }
    const head = await get(server.port, '/assets/app.js', '', 'HEAD');
    expect(statusOf(head)).toBe(200);
    expect(head).not.toContain('console.log');
    await healthy();
  });

  it('odd headers: reversed, multi-part and garbage ranges, a bad Host, a 60 kB header', async () => {
    for (const range of ['bytes=5-2', 'bytes=0-1,3-4', 'bytes=-', 'bytes=abc-def', 'bytes=99999999999-', 'pages=1-2']) {
      const response = await get(server.port, '/assets/app.js', `Range: ${range}\r\n`);
      expect([200, 206, 416]).toContain(statusOf(response));
    }
    expect(statusOf(await get(server.port, '/assets/app.js', 'Range: bytes=0-3\r\n'))).toBe(206);
    expect([200, 400]).toContain(
      statusOf(await rawRequest(server.port, 'GET / HTTP/1.1\r\nHost: %ZZ\u0000\r\nConnection: close\r\n\r\n')),
    );
    expect([400, 431]).toContain(statusOf(await get(server.port, '/', `X-Big: ${'x'.repeat(60_000)}\r\n`)));
    await healthy();
  });

  it('every response carries the security headers; assets are cacheable', async () => {
    const page = await get(server.port, '/dashboard');
    expect(statusOf(page)).toBe(200);
    expect(page).toMatch(/content-security-policy: default-src 'self'/i);
    expect(page).toMatch(/x-content-type-options: nosniff/i);
    expect(page).toMatch(/referrer-policy: no-referrer/i);
    expect(await get(server.port, '/api/health')).toMatch(/x-content-type-options: nosniff/i);
    expect(await get(server.port, '/assets/app.js')).toMatch(/cache-control: public, max-age=31536000, immutable/i);
  });

  it('/api is rate limited per address', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 80; i++) statuses.push(statusOf(await get(server.port, '/api/runs')));
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
  });

  it('left no server-side error behind', () => {
    expect(server.errors).toEqual([]);
  });
});

describe('a finite-but-huge spectral gradient (a second crash found once)', () => {
  it('never reaches the model: no non-finite weight or momentum, no exit, the run stays usable', async () => {
    const server = await startServer({ defaultRun: false });
    try {
      const run = server.app.runs.create(
        { scheme: 'atomo-svd', budget: 2, maxRounds: 50, evalEvery: 1000, roundDeadlineMs: 60_000 },
        'running',
      );
      const attacker = await joinRaw(server.url, run.id);
      const layout = run.layout;
      for (let attempt = 0; attempt < 3; attempt++) {
        const round = await attacker.nextRound(3_000).catch(() => null);
        if (round === null) break; // the run stopped opening rounds: it paused itself, checked below
        const layers = layout.tensors.map((tensor, index) => {
          const [rows, cols] = tensor.shape;
          return encodeLayer(
            {
              scheme: 'atomo-svd',
              shape: tensor.shape,
              count: 1,
              u: new Float32Array(rows).fill(1.8e19),
              v: new Float32Array(cols).fill(1.8e19),
              scales: new Float32Array([1]),
            },
            index,
          );
        });
        const submission: GradientSubmission = {
          runId: run.id,
          workerId: attacker.accepted.workerId,
          version: round.version,
          layers,
          loss: 1,
          layerStats: layout.tensors.map(() => ({ closedForm: 0, realised: 0, gradientNormSq: 0 })),
          computeMs: 1,
        };
        await attacker.socket.timeout(10_000).emitWithAck('gradient:submit', submission);
      }
      // Whatever the server did with them, the model and momentum it holds and checkpoints are finite.
      const snapshot = run.snapshot();
      expect(snapshot.params.every(Number.isFinite)).toBe(true);
      expect(snapshot.velocity.every(Number.isFinite)).toBe(true);
      // The update that overflowed was discarded and reported: the run paused itself with the reason.
      expect(run.status).toBe('paused');
      expect(run.fault).toMatch(/momentum overflows/);
      expect(server.errors.map(String).join('\n')).toContain(`run ${run.id}`);
      // The server still answers.
      const res = await fetch(`${server.url}/api/health`);
      expect(res.status).toBe(200);
      attacker.close();
    } finally {
      await server.close();
    }
  });
});
