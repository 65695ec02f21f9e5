/**
 * The keepalive thread (docs/scaling.md, "The leader"): a main thread that
 * is busy for longer than the lease keeps its lease and heartbeat, because
 * the thread renews them; one silent for longer than its liveness bound
 * loses both, so a hung leader is replaced as a dead one is.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, removeDataDir, waitFor } from '../testing/harness';
import { Keepalive } from './keepalive';
import { startRedisServer, type RedisServer } from './redisServer';
import { ClusterState, LEASE_TTL_MS } from './state';

/** This project's test port block (3650-3699) for this test's Redis. */
const REDIS_PORT = 3672;
const NAMESPACE = 'keepalive-test';

/** Holds the main thread, as a burst of gradients to decode would. */
function busy(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // spin
  }
}

describe('the keepalive thread', () => {
  const dataDir = makeDataDir();
  let server: RedisServer;
  let redis: Redis;
  beforeAll(async () => {
    server = await startRedisServer(dataDir, REDIS_PORT);
    redis = new Redis(server.url);
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
    removeDataDir(dataDir);
  });

  it('refuses to start a second Redis on a port another one holds', async () => {
    // The first one's keys would otherwise pass for the second cluster's state.
    await expect(startRedisServer(dataDir, REDIS_PORT)).rejects.toThrow(/already taken by another Redis/);
    expect(await redis.ping()).toBe('PONG');
  });

  it(
    'keeps the lease through a busy spell longer than the lease, ' +
      'and gives it up when the main thread stays silent',
    async () => {
      const events: string[] = [];
      /** A process of its own cluster namespace, its keepalive, and the lease it holds. */
      const lead = async (processId: string, livenessMs: number) => {
        const namespace = `${NAMESPACE}-${processId}`;
        const keepalive = await Keepalive.start(
          { redisUrl: server.url, namespace, processId, livenessMs },
          {
            onLapsed: () => events.push(`${processId} lapsed`),
            onLost: (value) => events.push(`lost ${value}`),
            log: (line) => events.push(line),
          },
        );
        const lease = (await new ClusterState(redis, namespace).acquireLeadership(processId))!;
        keepalive.hold(lease);
        return { namespace, keepalive, lease };
      };
      // Two on one main thread: a patient one, and one that takes half a second of silence for death.
      const patient = await lead('patient', 15_000);
      const impatient = await lead('impatient', 500);

      busy(LEASE_TTL_MS + 1500);

      // The patient thread renewed throughout; the impatient one stopped renewing, so its lease and heartbeat lapsed.
      expect(await redis.get(`${patient.namespace}:leader`)).toBe(patient.lease);
      expect(await redis.pttl(`${patient.namespace}:proc:patient`)).toBeGreaterThan(0);
      expect(await redis.get(`${impatient.namespace}:leader`)).toBeNull();
      // Once the main thread pulses again, the impatient thread finds its heartbeat lapsed and its lease gone.
      await waitFor(
        () => events.includes(`lost ${impatient.lease}`) && events.includes('impatient lapsed'),
        5_000,
        'the impatient thread to report',
      );
      expect(events.some((line) => line.includes('impatient: main thread silent'))).toBe(true);
      expect(events).not.toContain(`lost ${patient.lease}`);
      expect(events).not.toContain('patient lapsed');
      await patient.keepalive.stop();
      await impatient.keepalive.stop();
    },
  );
});
