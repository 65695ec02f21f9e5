/**
 * The aggregator a swarm trains against: the one at `--url`, or one started
 * in this process on an ephemeral loopback port with a temporary DATA_DIR
 * and a random admin token (removed again on close).
 */
import { randomBytes } from 'node:crypto';
import { removeDataDir, startServer } from '../../server/testing/harness';

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

/** Starts an in-process aggregator with no default run. */
export async function startLocalAggregator(): Promise<AggregatorHandle> {
  const adminToken = randomBytes(16).toString('hex');
  const server = await startServer({ defaultRun: false, adminToken });
  return {
    url: server.url,
    adminToken,
    local: true,
    errors: server.errors,
    close: async () => {
      await server.close();
      removeDataDir(server.dataDir);
    },
  };
}

/** A handle on an aggregator started elsewhere. */
export function remoteAggregator(url: string, adminToken: string): AggregatorHandle {
  return { url, adminToken, local: false, errors: [], close: async () => {} };
}
