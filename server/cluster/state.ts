/**
 * What a cluster keeps in Redis (docs/scaling.md, "State in Redis"): the
 * leader's lease, each process's heartbeat, and the leader's checkpoints.
 *
 *   <ns>:leader        "<processId> <term>", SET NX PX, renewed by its holder
 *   <ns>:term          incremented by each new leader: its fencing token
 *   <ns>:proc:<id>     a process's heartbeat, SET PX, renewed
 *   <ns>:run:<runId>   a run's checkpoint, server/persistence/checkpoint.ts's format
 *   <ns>:runs          the run ids (a set)
 *   <ns>:workers       the identities (workers.json's JSON)
 *
 * Every write of the leader checks, in one script, that the lease is still
 * its own: a leader that lost it (a pause past the lease) cannot overwrite
 * what its successor wrote. Redis keeps its data in the data directory
 * (append-only file), so a restarted cluster resumes every run.
 */
import type { Redis } from 'ioredis';
import { decodeCheckpoint, encodeCheckpoint, type StoredRun } from '../persistence/checkpoint';
import type { WorkersSnapshot } from '../run/workers';

/** How long a lease or heartbeat lives without renewal (ms), and how often it is renewed. */
export const LEASE_TTL_MS = 3000;
/** Renewal period of leases and heartbeats. */
export const RENEW_EVERY_MS = 750;

const RENEW =
  `if redis.call('GET', KEYS[1]) == ARGV[1] ` + `then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;
// KEYS: lease, target, set; ARGV: lease value, data, member ('' for none), mode ('set' | 'del').
const FENCED_WRITE =
  `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end\n` +
  `if ARGV[4] == 'del' then redis.call('DEL', KEYS[2]) ` +
  `if ARGV[3] ~= '' then redis.call('SREM', KEYS[3], ARGV[3]) end return 1 end\n` +
  `redis.call('SET', KEYS[2], ARGV[2]) if ARGV[3] ~= '' then redis.call('SADD', KEYS[3], ARGV[3]) end return 1`;

/** A write was refused: this process no longer holds the lease. */
export class LeaseLost extends Error {
  constructor() {
    super('this process no longer holds the leader lease');
    this.name = 'LeaseLost';
  }
}

/** The cluster's keys under one namespace. */
export class ClusterState {
  readonly #redis: Redis;
  readonly #ns: string;

  constructor(redis: Redis, namespace: string) {
    this.#redis = redis;
    this.#ns = namespace;
  }

  /** Who leads now ("<processId> <term>"), or null. */
  async leader(): Promise<{ processId: string; term: number } | null> {
    const value = await this.#redis.get(`${this.#ns}:leader`);
    return value === null ? null : parseLease(value);
  }

  /** Tries to become the leader; returns the lease value on success. */
  async acquireLeadership(processId: string): Promise<string | null> {
    // The term is taken first: a failed attempt only skips a number.
    const term = await this.#redis.incr(`${this.#ns}:term`);
    const value = `${processId} ${term}`;
    const ok = await this.#redis.set(`${this.#ns}:leader`, value, 'PX', LEASE_TTL_MS, 'NX');
    return ok === 'OK' ? value : null;
  }

  /** Renews the lease; false when it is no longer `value`. */
  async renewLeadership(value: string): Promise<boolean> {
    return (await this.#redis.eval(RENEW, 1, `${this.#ns}:leader`, value, LEASE_TTL_MS)) === 1;
  }

  /** Gives the lease up (on a clean stop), if still held. */
  async releaseLeadership(value: string): Promise<void> {
    await this.#redis.eval(RELEASE, 1, `${this.#ns}:leader`, value);
  }

  /**
   * Marks a process alive for LEASE_TTL_MS; returns false when its heartbeat had lapsed (others may have written it
   * off).
   */
  async heartbeat(processId: string): Promise<boolean> {
    const key = `${this.#ns}:proc:${processId}`;
    if ((await this.#redis.set(key, '1', 'PX', LEASE_TTL_MS, 'XX')) === 'OK') return true;
    await this.#redis.set(key, '1', 'PX', LEASE_TTL_MS);
    return false;
  }

  /** Which of `processIds` still beat. */
  async alive(processIds: readonly string[]): Promise<Set<string>> {
    if (processIds.length === 0) return new Set();
    const values = await this.#redis.mget(processIds.map((id) => `${this.#ns}:proc:${id}`));
    return new Set(processIds.filter((_, i) => values[i] !== null));
  }

  /** Stops a process's heartbeat (a clean stop: others need not wait for it to lapse). */
  async forget(processId: string): Promise<void> {
    await this.#redis.del(`${this.#ns}:proc:${processId}`);
  }

  /** Writes a run's checkpoint if `lease` is still the leader's; throws LeaseLost otherwise. */
  async saveRun(lease: string, stored: StoredRun): Promise<void> {
    const runId = stored.snapshot.runId;
    await this.#fenced(lease, `${this.#ns}:run:${runId}`, encodeCheckpoint(stored), runId, 'set');
  }

  /** Deletes a run's checkpoint (fenced). */
  async deleteRun(lease: string, runId: string): Promise<void> {
    await this.#fenced(lease, `${this.#ns}:run:${runId}`, '', runId, 'del');
  }

  /** Writes the identities (fenced). */
  async saveWorkers(lease: string, snapshot: WorkersSnapshot): Promise<void> {
    await this.#fenced(lease, `${this.#ns}:workers`, JSON.stringify(snapshot), '', 'set');
  }

  /** Every stored run (a damaged checkpoint is reported and skipped) and the identities. */
  async load(onError: (error: unknown) => void): Promise<{ runs: StoredRun[]; workers: WorkersSnapshot | null }> {
    const ids = (await this.#redis.smembers(`${this.#ns}:runs`)).sort();
    const runs: StoredRun[] = [];
    for (const id of ids) {
      const bytes = await this.#redis.getBuffer(`${this.#ns}:run:${id}`);
      if (bytes === null) continue;
      try {
        runs.push(decodeCheckpoint(bytes));
      } catch (error) {
        onError(
          new Error(
            `cluster: the checkpoint of run ${id} in Redis is damaged (${(error as Error).message}); ` +
              `it is not restored`,
          ),
        );
      }
    }
    runs.sort((a, b) => a.createdAt - b.createdAt);
    const raw = await this.#redis.get(`${this.#ns}:workers`);
    return { runs, workers: raw === null ? null : (JSON.parse(raw) as WorkersSnapshot) };
  }

  async #fenced(lease: string, key: string, data: string | Buffer, member: string, mode: 'set' | 'del'): Promise<void> {
    const done = await this.#redis.eval(
      FENCED_WRITE,
      3,
      `${this.#ns}:leader`,
      key,
      `${this.#ns}:runs`,
      lease,
      data,
      member,
      mode,
    );
    if (done !== 1) throw new LeaseLost();
  }
}

/** "<processId> <term>" → its parts. */
export function parseLease(value: string): { processId: string; term: number } {
  const space = value.lastIndexOf(' ');
  return { processId: value.slice(0, space), term: Number(value.slice(space + 1)) };
}
