/** Entry point: reads the configuration from the environment, loads the test digits, and listens. */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { loadMnist } from '../core/data';
import { createApp } from './app';
import { createCpuModelRuntime } from './cpuModel';
import { createFileReader } from './data/fileReader';

const port = Number(process.env.PORT ?? 3000);
const adminToken = process.env.ADMIN_TOKEN ?? randomBytes(16).toString('hex');
const clientDir = fileURLToPath(new URL('../dist/client', import.meta.url));
const dataDir = process.env.DATA_DIR ?? fileURLToPath(new URL('../data', import.meta.url));

const { test } = await loadMnist(createFileReader());
const app = await createApp({ clientDir, adminToken, dataDir, model: createCpuModelRuntime(test) });
app.httpServer.listen(port, () => {
  const base = `http://localhost:${port}`;
  console.log(`atomo-swarm aggregator listening on ${base}`);
  console.log(`  students open:        ${base}/`);
  console.log(`  teacher dashboard:    ${base}/dashboard?token=${adminToken}`);
  console.log(`  checkpoints:          ${dataDir}/runs/`);
});

function shutdown(): void {
  void app.close().then(() => process.exit(0));
}
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
