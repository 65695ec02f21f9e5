/**
 * Entry point: reads the configuration from the environment and the command
 * line, loads the test digits, and listens.
 *   PORT=3000  ADMIN_TOKEN=…  DATA_DIR=data/
 *   MAX_WORKERS=10000  MAX_WORKERS_PER_ADDRESS=64  WORKER_IDLE_HOURS=24   bounds on worker identities (server/limits.ts)
 *   --https or HTTPS=1     serve HTTPS and WSS (students' devices get WebGPU);
 *                          CERT_FILE and KEY_FILE for a real certificate, else a self-signed one in DATA_DIR/tls/
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import { loadMnist } from '../core/data';
import { createApp } from './app';
import { formatBanner } from './banner';
import { createCpuModelRuntime } from './cpuModel';
import { createFileReader } from './data/fileReader';
import { joinInfo, lanAddresses } from './lan';
import { identityLimitsFromEnv } from './limits';
import { loadOrCreateTls, type TlsMaterial } from './tls';

const port = Number(process.env.PORT ?? 3000);
const adminToken = process.env.ADMIN_TOKEN ?? randomBytes(16).toString('hex');
const clientDir = fileURLToPath(new URL('../dist/client', import.meta.url));
const dataDir = process.env.DATA_DIR ?? fileURLToPath(new URL('../data', import.meta.url));
const identityLimits = identityLimitsFromEnv(process.env);
const https = process.argv.includes('--https') || ['1', 'true', 'yes'].includes((process.env.HTTPS ?? '').toLowerCase());

let tls: TlsMaterial | null = null;
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

const { train, test } = await loadMnist(createFileReader());
const app = await createApp({
  clientDir,
  adminToken,
  dataDir,
  model: createCpuModelRuntime(test),
  train,
  identityLimits,
  ...(tls === null ? {} : { tls: { key: tls.key, cert: tls.cert } }),
});
app.httpServer.listen(port, () => {
  const address = app.httpServer.address();
  const bound = address !== null && typeof address === 'object' ? address.port : port;
  for (const line of formatBanner({ join: joinInfo(tls === null ? 'http' : 'https', bound), adminToken, dataDir, tls })) console.log(line);
});

function shutdown(): void {
  void app.close().then(() => process.exit(0));
}
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
