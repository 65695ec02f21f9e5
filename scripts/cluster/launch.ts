/**
 * The aggregator started for real, as `npm start [-- --processes N]` starts
 * it, for the kill test and the cluster benchmark: its own data directory,
 * port, Redis port, namespace and admin token, and a stop that waits for a
 * clean exit (the primary stops its processes, then Redis).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Where and how to start it. */
export interface LaunchOptions {
  /** 1: the one-process server (no Redis); more: the cluster. */
  readonly processes: number;
  readonly port: number;
  readonly redisPort: number;
  readonly dataDir: string;
  readonly adminToken: string;
  readonly namespace: string;
  /** Keyless joins allowed from this machine's one address. */
  readonly maxWorkersPerAddress: number;
  /** Extra node flags (the cluster's processes inherit them), e.g. --cpu-prof. */
  readonly nodeArgs?: readonly string[];
}

/** Spawns `server/index.ts` under tsx as a loader of this node (not its CLI, so signals reach the primary itself). */
export function launchAggregator(options: LaunchOptions): ChildProcess {
  return spawn(
    process.execPath,
    [
      ...(options.nodeArgs ?? []),
      '--import',
      'tsx',
      'server/index.ts',
      ...(options.processes > 1 ? ['--processes', String(options.processes)] : []),
    ],
    {
      cwd: root,
      env: {
        ...process.env,
        PORT: String(options.port),
        REDIS_PORT: String(options.redisPort),
        DATA_DIR: options.dataDir,
        ADMIN_TOKEN: options.adminToken,
        CLUSTER_NAMESPACE: options.namespace,
        MAX_WORKERS_PER_ADDRESS: String(options.maxWorkersPerAddress),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
}

/** SIGTERM, and SIGKILL if it has not exited within 20 s. */
export async function stopAggregator(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(20_000)]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

/**
 * GET a JSON route, retrying while the server starts, elects a leader (503) or loses the process a request landed on.
 */
export async function getJson<T>(url: string, attempts = 300): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      // A request to a process that is being killed or taking over may never be answered: give up on it and retry.
      const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
      if (response.ok) return (await response.json()) as T;
    } catch {
      // not up, or the connection's process just died
    }
    if (attempt >= attempts) throw new Error(`GET ${url} kept failing`);
    await sleep(200);
  }
}
