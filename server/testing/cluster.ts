/**
 * The cluster tests' harness: one Redis on a port of this project's test block
 * and N cluster processes in this process (each its own Redis connections,
 * port and process id), on the CPU model, with the training split for the
 * simulated workers. Killing processes for real is
 * scripts/cluster/kill.cluster.test.ts's job.
 */
import type { AddressInfo } from 'node:net';
import { createClusterMember, type ClusterMember } from '../cluster/member';
import { startRedisServer, type RedisServer } from '../cluster/redisServer';
import { createCpuModelRuntime } from '../model/cpuModel';
import { loadTestData, makeDataDir, removeDataDir, waitFor, TEST_ADMIN_TOKEN } from './harness';
import type { Leadership } from '../cluster/leadership';

/** N processes of one cluster and its Redis. */
export interface TestCluster {
  readonly members: readonly { readonly member: ClusterMember; readonly url: string }[];
  readonly redis: RedisServer;
  /** Server-side failures of every member. */
  readonly errors: unknown[];
  /** Every member's event and count lines (server/cluster/health.ts). */
  readonly info: string[];
  /** The leader's state, once a member leads. */
  leader(): Promise<Leadership>;
  close(): Promise<void>;
}

/** Starts Redis on `redisPort` and `processes` members under `namespace`. */
export async function startTestCluster(processes: number, redisPort: number, namespace: string): Promise<TestCluster> {
  const dataDir = makeDataDir();
  const redis = await startRedisServer(dataDir, redisPort);
  const { train, test } = await loadTestData();
  const errors: unknown[] = [];
  const info: string[] = [];
  const members: { member: ClusterMember; url: string }[] = [];
  for (let i = 0; i < processes; i++) {
    const member = await createClusterMember({
      redisUrl: redis.url,
      namespace,
      clientDir: `${dataDir}/no-client`,
      adminToken: TEST_ADMIN_TOKEN,
      model: createCpuModelRuntime(test),
      train,
      defaultRun: false,
      logError: (error) => errors.push(error),
      logInfo: (line) => info.push(line),
    });
    await new Promise<void>((resolve) => member.httpServer.listen(0, '127.0.0.1', resolve));
    members.push({ member, url: `http://127.0.0.1:${(member.httpServer.address() as AddressInfo).port}` });
  }
  return {
    members,
    redis,
    errors,
    info,
    leader: async () => {
      await waitFor(() => members.some((m) => m.member.leadership() !== null), 10_000, 'a leader');
      return members.find((m) => m.member.leadership() !== null)!.member.leadership()!;
    },
    close: async () => {
      for (const { member } of members) await member.close();
      await redis.stop();
      removeDataDir(dataDir);
    },
  };
}
