/**
 * The static handler when the built client changes under a live server: a file indexed at start-up and deleted since.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, removeDataDir } from '../local';
import { createStaticHandler } from './static';

describe('static files', () => {
  let dir: string;
  const errors: unknown[] = [];
  const server = createServer();
  let base = '';

  beforeAll(async () => {
    dir = makeDataDir();
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>app</title>');
    writeFileSync(join(dir, 'assets', 'gone.js'), 'console.log("about to be deleted")');
    const serve = createStaticHandler(dir, (error) => errors.push(error));
    server.on('request', serve);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    removeDataDir(dir);
  });

  it('a file deleted after start-up closes that response, is reported, and the server serves on', async () => {
    rmSync(join(dir, 'assets', 'gone.js'));
    // sirv's index still names the file: the headers go out, the read fails, the connection is cut.
    await expect(fetch(`${base}/assets/gone.js`).then((res) => res.text())).rejects.toThrow();
    expect(errors.map((e) => `${String(e)} ← ${String((e as Error).cause)}`)).toEqual([
      expect.stringMatching(/^Error: serving \/assets\/gone\.js failed ← Error: ENOENT/),
    ]);
    const index = await fetch(`${base}/`);
    expect(index.status).toBe(200);
    expect(await index.text()).toContain('<title>app</title>');
  });
});
