/**
 * The aggregator a swarm trains against: the one at `--url`, or one started
 * in this process on an ephemeral loopback port with a temporary DATA_DIR
 * and a random admin token (removed again on close).
 */
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { loadMnist } from '../../core/data';
import type { AppOptions } from '../../server/app';
import { createFileReader } from '../../server/data/fileReader';
import { createThreadedModelRuntime } from '../../server/evaluation/threadedModel';
import { removeDataDir, startLocalServer, type LocalServer } from '../../server/local';

/** Where the swarm connects and how it authenticates. */
export interface AggregatorHandle {
  readonly url: string;
  readonly adminToken: string;
  /** Whether this process started it (and close() stops it). */
  readonly local: boolean;
  /** Server-side failures of a local aggregator (empty for a remote one). */
  readonly errors: readonly unknown[];
  close(): Promise<void>;
}

/**
 * An aggregator in this process, evaluating on the MNIST test split, with a random admin token and no default run
 * unless given.
 */
export async function startInProcessServer(
  options: Partial<AppOptions> = {},
): Promise<LocalServer & { readonly adminToken: string }> {
  const adminToken = randomBytes(16).toString('hex');
  const { test } = await loadMnist(createFileReader());
  return { ...(await startLocalServer(test, { defaultRun: false, adminToken, ...options })), adminToken };
}

/**
 * Starts an in-process aggregator with no default run. Its evaluations run on one thread per core
 * (server/evaluation/threadedModel.ts): the swarm's workers wait for an evaluated round, so the cores would otherwise
 * idle.
 */
export async function startLocalAggregator(): Promise<AggregatorHandle> {
  const { test } = await loadMnist(createFileReader());
  const model = createThreadedModelRuntime(test, { threads: availableParallelism() });
  const server = await startInProcessServer({ model });
  return {
    url: server.url,
    adminToken: server.adminToken,
    local: true,
    errors: server.errors,
    close: async () => {
      await server.close();
      await model.close();
      removeDataDir(server.dataDir);
    },
  };
}

/** A handle on an aggregator started elsewhere. */
export function remoteAggregator(url: string, adminToken: string): AggregatorHandle {
  return { url, adminToken, local: false, errors: [], close: async () => {} };
}
