/**
 * Entry point of one swarm worker thread: the tab's own session
 * (client/session/workerSession.ts) with what a thread has instead of a
 * page: the digits read from public/data/, the CPU backend or this thread's
 * own Dawn device, an in-memory identity, a socket.io channel to the
 * aggregator's URL, this thread's CPU clock for the CPU trainer's timings
 * (server/run/threadClock.ts), and a sink that counts instead of drawing.
 * Started by threads.ts.
 */
import { loadMnist } from '../../core/data';
import type { Backend } from '../../client/gpu/runtime/device';
import { socketChannelFactory } from '../../client/net/workerChannel';
import { translate } from '../../client/i18n';
import { memoryIdentity } from '../../client/net/workerIdentity';
import type { WorkerSession, WorkerSessionSink } from '../../client/session/workerSession';
import { createFileReader } from '../../server/data/fileReader';
import { threadCpuClock } from '../../server/run/threadClock';
import { registerRawLoader } from '../rawLoader';
import { workerThreadPort, type FromWorkerThread, type ToWorkerThread, type WorkerThreadData } from './threadProtocol';

// The session's trainer imports WGSL as ?raw strings: the loader must be in place before it is imported.
registerRawLoader();
const { quietSink, runWorkerSession } = await import('../../client/session/workerSession');

const { data, port } = workerThreadPort<WorkerThreadData>('workerThread.ts');
const post = (message: FromWorkerThread): void => port.postMessage(message);

/** This thread's backend: the CPU, or its own Dawn device and the way to release it. */
async function threadBackend(): Promise<{ backend: Backend; release: () => void }> {
  if (data.backend === 'cpu')
    return { backend: { kind: 'cpu', reason: 'headless swarm on the CPU' }, release: () => {} };
  const { requestNodeGpu } = await import('../../client/gpu/runtime/nodeDevice');
  const gpu = await requestNodeGpu(`swarm:${data.name}`);
  return { backend: { kind: 'webgpu', ctx: gpu }, release: () => gpu.release() };
}

/** A headless worker: its session and what its sink saw. */
interface Headless {
  readonly session: WorkerSession;
  readonly joined: Promise<number>;
  accepted: number;
  readonly notices: string[];
}

function startHeadless(name: string, backend: Backend): Promise<Headless> {
  let onJoined: (workerId: number) => void = () => {};
  let onFailed: (reason: string) => void = () => {};
  const joined = new Promise<number>((resolve, reject) => {
    onJoined = resolve;
    onFailed = (reason) => reject(new Error(reason));
  });
  const notices: string[] = [];
  const worker: Partial<Headless> & { accepted: number; notices: string[] } = { accepted: 0, notices };
  const sink: WorkerSessionSink = {
    ...quietSink(),
    setPhase: (phase) => {
      if (phase === 'failed' || phase === 'removed')
        onFailed(`${name} is ${phase}: ${notices.at(-1) ?? 'no reason given'}`);
    },
    assigned: ({ workerId }) => onJoined(workerId),
    roundSent: () => {
      worker.accepted += 1;
    },
    setNotice: (notice) => {
      if (notice !== null) notices.push(translate(notice));
    },
  };
  return runWorkerSession({
    sink,
    backend: async () => backend,
    loadData: (dataset) => loadMnist(createFileReader(), dataset),
    identity: async () => memoryIdentity(),
    openChannel: socketChannelFactory({ url: data.url }),
    name,
    runId: data.runId,
    showDigits: false,
    simulateLink: false,
    // One session per thread: the thread's CPU time is its rounds' own (the machine's load is not).
    cpuClock: threadCpuClock(),
  }).then((session) => Object.assign(worker, { session, joined }) as Headless);
}

try {
  const { backend, release } = await threadBackend();
  const workers = await Promise.all(
    Array.from({ length: data.count }, (_, i) =>
      startHeadless(data.count === 1 ? data.name : `${data.name}-${i}`, backend),
    ),
  );
  const workerIds = await Promise.all(workers.map((w) => w.joined));
  post({ type: 'joined', workerIds });
  port.on('message', (message: ToWorkerThread) => {
    if (message.type !== 'stop') return;
    for (const w of workers) w.session.close();
    release();
    post({
      type: 'stopped',
      accepted: workers.reduce((sum, w) => sum + w.accepted, 0),
      errors: workers.flatMap((w) => w.notices),
    });
    port.close();
  });
} catch (error) {
  post({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  port.close();
}
