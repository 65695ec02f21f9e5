/**
 * The cluster's own Redis (docs/scaling.md, "Running it"): Debian's redis-server
 * (the bootstrap installs it, as it installs Chromium), on a free loopback
 * port, its data (an append-only file, fsynced every second) in
 * <dataDir>/redis/ so a restarted cluster finds its runs, stopped with the
 * cluster. REDIS_URL points the cluster at an existing Redis instead.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/** Where Debian puts it. */
const REDIS_SERVER = '/usr/bin/redis-server';

/** A Redis this process started. */
export interface RedisServer {
  readonly url: string;
  readonly port: number;
  /** Stops it (its data is flushed to the append-only file first) and waits for it to exit. */
  stop(): Promise<void>;
}

/** A port nothing listens on now (the kernel's choice), on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        address !== null && typeof address === 'object' ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** Whether redis-server is installed, and the command that installs it when not. */
export function redisServerMissing(): string | null {
  return existsSync(REDIS_SERVER) ? null : 'apt-get install -y redis-server';
}

/** Starts redis-server on 127.0.0.1:`port` (a free one when absent) with its data in `<dataDir>/redis`. */
export async function startRedisServer(dataDir: string, port?: number): Promise<RedisServer> {
  const missing = redisServerMissing();
  if (missing !== null)
    throw new Error(`several processes need Redis (redis-server); install it with: ${missing} (or set REDIS_URL)`);
  const chosen = port ?? (await freePort());
  const dir = join(dataDir, 'redis');
  mkdirSync(dir, { recursive: true });
  const child: ChildProcess = spawn(
    REDIS_SERVER,
    [
      '--port',
      String(chosen),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--appendonly',
      'yes',
      '--appendfsync',
      'everysec',
      '--save',
      '',
      '--daemonize',
      'no',
      '--logfile',
      join(dir, 'redis.log'),
    ],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `redis://127.0.0.1:${chosen}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    let answering: string | undefined;
    try {
      await probe.connect();
      answering = /process_id:(\d+)/.exec(await probe.info('server'))?.[1];
      probe.disconnect();
    } catch (error) {
      probe.disconnect();
      if (child.exitCode !== null || Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`redis-server did not start on port ${chosen} (see ${join(dir, 'redis.log')})`, {
          cause: error,
        });
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      continue;
    }
    // The one answering must be ours: another Redis already on the port (left running by an earlier start) answers
    // too, and its old keys would pass for this cluster's state.
    if (Number(answering) !== child.pid) {
      child.kill('SIGKILL');
      throw new Error(
        `port ${chosen} is already taken by another Redis (process ${answering ?? '?'}); ` +
          `stop it or choose another port`,
      );
    }
    break;
  }
  return {
    url,
    port: chosen,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
