/**
 * `npm start -- --processes N` (docs/scaling.md, "Running it"): the primary
 * of Node's cluster module. It starts Redis (or uses REDIS_URL), forks N
 * aggregator processes that share one port (the kernel spreads connections
 * over them; WebSocket-only transport needs no sticky sessions), prints the
 * one URL, forks a replacement for a process that dies, and on SIGINT or
 * SIGTERM stops the processes, then Redis. It runs no aggregation itself,
 * so losing any aggregator process never stops the others.
 */
import { spawnSync } from 'node:child_process';
import cluster, { type Worker } from 'node:cluster';
import { fileURLToPath } from 'node:url';
import { redisServerMissing, startRedisServer, type RedisServer } from './redisServer';

/** How the primary starts its processes. */
export interface PrimaryOptions {
  readonly processes: number;
  readonly dataDir: string;
  readonly adminToken: string;
  /** Redis to use instead of starting one. */
  readonly redisUrl?: string;
  /** Port of the Redis it starts (a free one when absent). */
  readonly redisPort?: number;
  readonly namespace: string;
  /** Lines to print once every process listens (the URL, the token), given the port they share. */
  readonly banner: (port: number, redis: string) => readonly string[];
}

/** The environment a cluster process reads (set by the primary). */
export const MEMBER_ENV = {
  redisUrl: 'CLUSTER_REDIS_URL',
  namespace: 'CLUSTER_NAMESPACE',
  adminToken: 'ADMIN_TOKEN',
} as const;

/** Delay before a dead process is replaced (ms): long enough not to spin on a process that cannot start. */
const RESPAWN_AFTER_MS = 1000;

/** Runs the primary until a signal stops it. */
export async function runPrimary(options: PrimaryOptions): Promise<void> {
  let redis: RedisServer | null = null;
  if (options.redisUrl === undefined) {
    // Installed like Chromium, by the bootstrap (apt as root, else it prints the command and stops).
    if (redisServerMissing() !== null) {
      const bootstrap = fileURLToPath(new URL('../../scripts/bootstrap.mjs', import.meta.url));
      if (spawnSync(process.execPath, [bootstrap, 'redis'], { stdio: 'inherit' }).status !== 0) process.exit(1);
    }
    redis = await startRedisServer(options.dataDir, options.redisPort);
  }
  const redisUrl = options.redisUrl ?? redis!.url;
  const env = {
    [MEMBER_ENV.redisUrl]: redisUrl,
    [MEMBER_ENV.namespace]: options.namespace,
    [MEMBER_ENV.adminToken]: options.adminToken,
  };
  let stopping = false;
  let announced = false;
  const listening = new Set<number>();

  const fork = (): Worker => {
    const worker = cluster.fork(env);
    worker.on('listening', (address) => {
      listening.add(worker.id);
      if (!announced && listening.size >= options.processes) {
        announced = true;
        for (const line of options.banner(address.port, redisUrl)) console.log(line);
      }
    });
    return worker;
  };

  cluster.on('exit', (worker, code, signal) => {
    listening.delete(worker.id);
    if (stopping) return;
    console.error(
      `[cluster] aggregator process ${worker.process.pid} exited (${signal ?? `code ${code}`}); ` +
        `the others go on, a new one starts in ${RESPAWN_AFTER_MS} ms`,
    );
    setTimeout(() => {
      if (!stopping) fork();
    }, RESPAWN_AFTER_MS);
  });
  for (let i = 0; i < options.processes; i++) fork();

  const stop = async () => {
    if (stopping) return;
    stopping = true;
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    await Promise.all(
      workers.map(
        (worker) =>
          new Promise<void>((resolve) => {
            if (worker.isDead()) return resolve();
            const force = setTimeout(() => worker.process.kill('SIGKILL'), 10_000);
            worker.once('exit', () => {
              clearTimeout(force);
              resolve();
            });
            worker.process.kill('SIGTERM');
          }),
      ),
    );
    await redis?.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}
