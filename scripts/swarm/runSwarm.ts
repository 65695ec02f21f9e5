/**
 * One headless swarm run, programmatically: an aggregator (given, remote or
 * in-process), a run created and started through the admin API, N worker
 * threads that join it as tabs do, progress while it trains, and the history
 * the server recorded. `npm run swarm`, `npm run compare` and the tests call it.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { SWIFTSHADER_ICD } from '../../client/gpu/runtime/nodeDevice';
import { dirname } from 'node:path';
import { asRunId, type RunConfigPatch } from '../../core/protocol';
import { connectAdmin } from './admin';
import { remoteAggregator, startLocalAggregator, type AggregatorHandle } from './aggregator';
import { toHistoryRound, type SwarmHistory } from './history';
import type { SwarmOptions } from './options';
import { createProgress } from './progress';
import { startWorkerThreads } from './threads';

/** The run configuration a swarm asks for: one shard per worker, the same seed for every scheme. */
export function runPatch(options: SwarmOptions): RunConfigPatch {
  return {
    ...options.overrides,
    name: options.name ?? `swarm ${options.scheme}`,
    scheme: options.scheme,
    budget: options.budget,
    levels: options.levels,
    bucketSize: options.bucketSize,
    ...(options.byteBudget === undefined ? {} : { byteBudget: options.byteBudget }),
    ...(options.errorFeedback === true ? { errorFeedback: true } : {}),
    seed: options.seed,
    ...(options.model === undefined ? {} : { model: options.model }),
    ...(options.dataset === undefined ? {} : { dataset: options.dataset }),
    ...(options.downlink === undefined ? {} : { downlink: options.downlink }),
    ...(options.downlinkBudget === undefined ? {} : { downlinkBudget: options.downlinkBudget }),
    shards: options.workers,
    maxRounds: options.rounds,
    evalEvery: options.evalEvery,
    ...(options.aggregation === undefined ? {} : { aggregation: options.aggregation }),
    ...(options.learningRate === undefined ? {} : { learningRate: options.learningRate }),
  };
}

/** Writes a history file, creating its folder. */
export function writeHistory(path: string, history: SwarmHistory): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(history, null, 1)}\n`);
}

/**
 * Dawn's Vulkan loader reads VK_ICD_FILENAMES from the process environment,
 * but a worker thread's process.env is its own copy: requestNodeGpu setting
 * it inside a thread never reaches the loader. Set it here, on the main
 * thread, before any thread opens a device.
 */
function prepareVulkanEnvironment(): void {
  if (process.env.VK_ICD_FILENAMES === undefined && existsSync(SWIFTSHADER_ICD))
    process.env.VK_ICD_FILENAMES = SWIFTSHADER_ICD;
}

/** Runs one swarm to the end of its run; `aggregator` lets several runs share one server. */
export async function runSwarm(options: SwarmOptions, aggregator?: AggregatorHandle): Promise<SwarmHistory> {
  const server =
    aggregator ??
    (options.url !== undefined ? remoteAggregator(options.url, options.token ?? '') : await startLocalAggregator());
  const admin = await connectAdmin(server.url, server.adminToken);
  if (options.backend === 'webgpu') prepareVulkanEnvironment();
  let threads: Awaited<ReturnType<typeof startWorkerThreads>> | null = null;
  try {
    const run = await admin.createRun(runPatch(options));
    const runId = asRunId(run.runId);
    threads = await startWorkerThreads(
      Array.from({ length: options.workers }, (_, i) => ({
        url: server.url,
        runId,
        count: 1,
        backend: options.backend,
        name: `swarm-${options.backend}-${i}`,
      })),
    );
    const progress = createProgress(run.config.name, options.rounds, options.progress);
    const finished = admin.followRun(runId, (metrics) => progress.update(metrics));
    const startedAt = new Date();
    const clock = performance.now();
    await admin.startRun(runId);
    await Promise.race([finished, threads.crashed]);
    const wallSeconds = (performance.now() - clock) / 1000;
    progress.done();
    const history = await admin.fetchHistory(runId);
    const result: SwarmHistory = {
      runId,
      config: run.config,
      workers: options.workers,
      backend: options.backend,
      startedAt: startedAt.toISOString(),
      wallSeconds,
      rounds: history.map(toHistoryRound),
    };
    if (options.out !== undefined) writeHistory(options.out, result);
    return result;
  } finally {
    const stopped = await threads?.stop();
    if (stopped && stopped.errors.length > 0)
      console.error(`swarm: the server refused ${stopped.errors.length} messages, first: ${stopped.errors[0]}`);
    admin.close();
    if (aggregator === undefined) await server.close();
  }
}
