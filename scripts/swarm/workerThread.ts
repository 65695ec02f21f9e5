/**
 * Entry point of one swarm worker thread: its own MNIST copy, its own backend
 * (the CPU reference or its own Dawn device), and one or more SimulatedWorker
 * tabs speaking the real socket.io protocol. Started by threads.ts.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadMnist, type Dataset } from '../../core/data';
import { createFileReader } from '../../server/data/fileReader';
import { SimulatedWorker, type StepContext, type SubmissionStep } from '../../server/testing/simulatedWorker';
import type { FromWorkerThread, ToWorkerThread, WorkerThreadData } from './threadProtocol';

const data = workerData as WorkerThreadData;
const port = parentPort;
if (port === null) throw new Error('workerThread.ts runs only as a worker thread');
const post = (message: FromWorkerThread): void => port.postMessage(message);

/** A WebGPU step factory on this thread's own Dawn device, and the way to release it. */
async function webgpuSteps(train: Dataset): Promise<{ createStep: (context: StepContext) => SubmissionStep; release: () => void }> {
  // ?raw WGSL imports need the loader before any GPU module is imported.
  const { registerRawLoader } = await import('../rawLoader');
  registerRawLoader();
  const { requestNodeGpu } = await import('../../client/gpu/nodeDevice');
  const { createGpuBackend } = await import('../../client/gpu/training/gpuBackend');
  const { createGpuCompressor } = await import('../../client/gpu/compression/gpuCompressor');
  const { createWorkerRound } = await import('../../core/training/workerRound');
  const gpu = await requestNodeGpu(`swarm:${data.name}`);
  const backends: { destroy(): void }[] = [];
  return {
    createStep: ({ assignment, layout, shard }) => {
      const backend = createGpuBackend(gpu.device, layout);
      backends.push(backend);
      const { config } = assignment;
      return createWorkerRound({
        backend,
        layout,
        compression: config,
        batchSize: config.batchSize,
        seed: config.seed,
        worker: assignment.slot,
        train,
        shard,
        deviceCompressor: createGpuCompressor(backend),
      });
    },
    release: () => {
      for (const backend of backends) backend.destroy();
      gpu.release();
    },
  };
}

try {
  const { train } = await loadMnist(createFileReader());
  const gpu = data.backend === 'webgpu' ? await webgpuSteps(train) : null;
  const workers = Array.from(
    { length: data.count },
    (_, i) =>
      new SimulatedWorker({
        url: data.url,
        train,
        runId: data.runId,
        name: data.count === 1 ? data.name : `${data.name}-${i}`,
        reuseGradient: data.reuseGradient,
        ...(gpu === null ? {} : { createStep: gpu.createStep }),
      }),
  );
  const joined = await Promise.all(workers.map((w) => w.start()));
  post({ type: 'joined', workerIds: joined.map((j) => j.workerId) });
  port.on('message', (message: ToWorkerThread) => {
    if (message.type !== 'stop') return;
    for (const w of workers) w.stop();
    gpu?.release();
    const errors = workers.flatMap((w) => w.errors.map((e) => `${e.code}: ${e.message}`));
    post({ type: 'stopped', accepted: workers.reduce((sum, w) => sum + w.accepted.length, 0), errors });
    port.close();
  });
} catch (error) {
  post({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  port.close();
}
