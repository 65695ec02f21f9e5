/**
 * Entry point of one load-benchmark thread (`npm run bench -- server`): many
 * headless tabs (HeadlessTab) that compute one honest gradient each and resend it
 * every round, so the benchmark measures the aggregator rather than the
 * workers' arithmetic. Real training runs the tab's own session instead
 * (scripts/swarm/workerThread.ts).
 */
import { loadMnist } from '../../core/data';
import { createFileReader } from '../../server/data/fileReader';
import { HeadlessTab } from '../../client/net/headlessTab';
import {
  workerThreadPort,
  type FromWorkerThread,
  type ToWorkerThread,
  type WorkerThreadData,
} from '../swarm/threadProtocol';

const { data, port } = workerThreadPort<WorkerThreadData>('loadThread.ts');
const post = (message: FromWorkerThread): void => port.postMessage(message);

try {
  const { train } = await loadMnist(createFileReader());
  const workers = Array.from(
    { length: data.count },
    (_, i) =>
      new HeadlessTab({ url: data.url, train, runId: data.runId, name: `${data.name}-${i}`, reuseGradient: true }),
  );
  const joined = await Promise.all(workers.map((w) => w.start()));
  post({ type: 'joined', workerIds: joined.map((j) => j.workerId) });
  port.on('message', (message: ToWorkerThread) => {
    if (message.type !== 'stop') return;
    for (const w of workers) w.stop();
    const errors = workers.flatMap((w) => w.errors.map((e) => `${e.code}: ${e.message}`));
    post({
      type: 'stopped',
      accepted: workers.reduce((sum, w) => sum + w.accepted.length, 0),
      errors,
      disconnects: workers.reduce((sum, w) => sum + w.disconnects, 0),
      recoveries: workers.reduce((sum, w) => sum + w.recoveries, 0),
    });
    port.close();
  });
} catch (error) {
  post({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  port.close();
}
