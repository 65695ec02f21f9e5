/**
 * Entry point: reads the configuration from the environment and the command
 * line, loads the test digits, and listens.
 *   PORT=3000  ADMIN_TOKEN=…  DATA_DIR=data/
 *   MAX_WORKERS=10000  MAX_WORKERS_PER_ADDRESS=64  WORKER_IDLE_HOURS=24
 *                          bounds on worker identities (server/protocol/limits.ts)
 *   --https or HTTPS=1     serve HTTPS and WSS (students' devices get WebGPU);
 *                          CERT_FILE and KEY_FILE for a real certificate, else a self-signed one in DATA_DIR/tls/
 *   --processes N          N aggregator processes on one port, joined by Redis (docs/scaling.md);
 *                          REDIS_URL=redis://… for an existing Redis, else redis-server is started
 *                          (REDIS_PORT to choose its port) with its data in DATA_DIR/redis/
 */
import cluster from 'node:cluster';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import { loadMnist } from '../core/data';
import { createApp } from './app';
import { formatBanner } from './http/banner';
import { createCpuModelRuntime } from './model/cpuModel';
import { createFileReader } from './data/fileReader';
import { loadTestSet } from './data/testSets';
import { joinInfo, lanAddresses } from './http/lan';
import { identityLimitsFromEnv } from './protocol/limits';
import { loadOrCreateTls, type TlsMaterial } from './http/tls';
import { createClusterMember } from './cluster/member';
import { MEMBER_ENV, runPrimary } from './cluster/primary';

const port = Number(process.env.PORT ?? 3000);
const adminToken = process.env.ADMIN_TOKEN ?? randomBytes(16).toString('hex');
const clientDir = fileURLToPath(new URL('../dist/client', import.meta.url));
const dataDir = process.env.DATA_DIR ?? fileURLToPath(new URL('../data', import.meta.url));
const identityLimits = identityLimitsFromEnv(process.env);
const processes = processCount(process.argv);
const namespace = process.env.CLUSTER_NAMESPACE ?? 'atomo';
const https =
  process.argv.includes('--https') || ['1', 'true', 'yes'].includes((process.env.HTTPS ?? '').toLowerCase());

/** `--processes N` (or `--processes=N`): 1 when absent. */
function processCount(argv: readonly string[]): number {
  const at = argv.findIndex((arg) => arg === '--processes' || arg.startsWith('--processes='));
  if (at < 0) return 1;
  const text = argv[at]!.includes('=') ? argv[at]!.split('=')[1] : argv[at + 1];
  const count = Number(text);
  if (!Number.isInteger(count) || count < 1 || count > 64) {
    console.error(`--processes must be an integer from 1 to 64, got ${JSON.stringify(text ?? '')}`);
    process.exit(2);
  }
  return count;
}

let tls: TlsMaterial | null = null;
// The primary makes the certificate once; its processes then find it in DATA_DIR/tls/.
if (https) {
  const host = hostname().toLowerCase();
  tls = await loadOrCreateTls({
    dataDir,
    names: {
      // The bare host name, and its mDNS name (host.local) that Macs and most phones resolve.
      dnsNames: ['localhost', host, ...(host.includes('.') ? [] : [`${host}.local`])],
      ips: ['127.0.0.1', '::1', ...lanAddresses().map((a) => a.address)],
    },
    ...(process.env.CERT_FILE === undefined ? {} : { certFile: process.env.CERT_FILE }),
    ...(process.env.KEY_FILE === undefined ? {} : { keyFile: process.env.KEY_FILE }),
  });
}

const scheme = tls === null ? 'http' : 'https';
const tlsOption = tls === null ? {} : { tls: { key: tls.key, cert: tls.cert } };

if (processes > 1 && cluster.isPrimary) {
  await runPrimary({
    processes,
    dataDir,
    adminToken,
    namespace,
    ...(process.env.REDIS_URL === undefined ? {} : { redisUrl: process.env.REDIS_URL }),
    ...(process.env.REDIS_PORT === undefined ? {} : { redisPort: Number(process.env.REDIS_PORT) }),
    banner: (bound, redis) =>
      formatBanner({ join: joinInfo(scheme, bound), adminToken, dataDir, tls, cluster: { processes, redis } }),
  });
} else if (cluster.isWorker && process.env[MEMBER_ENV.redisUrl] !== undefined) {
  // Every process loads the training split: whichever leads runs the server's simulated workers.
  const { train, test } = await loadMnist(createFileReader());
  const member = await createClusterMember({
    redisUrl: process.env[MEMBER_ENV.redisUrl]!,
    namespace: process.env[MEMBER_ENV.namespace]!,
    clientDir,
    adminToken,
    model: createCpuModelRuntime(test, (dataset) => loadTestSet(dataset)),
    train,
    identityLimits,
    ...tlsOption,
  });
  member.httpServer.listen(port);
  const stop = () => {
    // A clean stop writes the last checkpoints; a stop that hangs (Redis gone) must still end.
    setTimeout(() => process.exit(1), 8_000).unref();
    void member.close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
} else {
  await startOneProcess();
}

/** The one-process aggregator, exactly as without --processes. */
async function startOneProcess(): Promise<void> {
  const { train, test } = await loadMnist(createFileReader());
  const app = await createApp({
    clientDir,
    adminToken,
    dataDir,
    model: createCpuModelRuntime(test, (dataset) => loadTestSet(dataset)),
    train,
    identityLimits,
    ...tlsOption,
  });
  app.httpServer.listen(port, () => {
    const address = app.httpServer.address();
    const bound = address !== null && typeof address === 'object' ? address.port : port;
    for (const line of formatBanner({
      join: joinInfo(tls === null ? 'http' : 'https', bound),
      adminToken,
      dataDir,
      tls,
    }))
      console.log(line);
  });

  function shutdown(): void {
    void app.close().then(() => process.exit(0));
  }
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}
