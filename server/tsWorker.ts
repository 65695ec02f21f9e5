/**
 * Starts a worker thread on a TypeScript entry. A worker thread does not
 * inherit tsx's loader, and on Node 20 `execArgv: ['--import', 'tsx']`
 * registers it too late for the entry itself ("Unknown file extension .ts").
 * So the thread starts from a bootstrap that registers tsx's ESM hooks in the
 * thread, then imports the entry. Used by the cluster's keepalive thread and
 * the swarm's and benchmarks' worker threads.
 */
import { Worker } from 'node:worker_threads';

/** A worker thread running `entry` (a .ts module) with `workerData`. */
export function startTsWorker(entry: URL, workerData: unknown): Worker {
  const bootstrap = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))})
  .then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(bootstrap, { eval: true, workerData });
}
