/** Entry point: reads the configuration from the environment and listens. */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createApp } from './app';

const port = Number(process.env.PORT ?? 3000);
const adminToken = process.env.ADMIN_TOKEN ?? randomBytes(16).toString('hex');
const clientDir = fileURLToPath(new URL('../dist/client', import.meta.url));

const app = createApp({ clientDir, adminToken });
app.httpServer.listen(port, () => {
  const base = `http://localhost:${port}`;
  console.log(`atomo-swarm aggregator listening on ${base}`);
  console.log(`  students open:        ${base}/`);
  console.log(`  teacher dashboard:    ${base}/dashboard?token=${adminToken}`);
});

function shutdown(): void {
  void app.close().then(() => process.exit(0));
}
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
