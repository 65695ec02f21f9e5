/**
 * Worker identities: a public WorkerId, the hash of the secret key the tab
 * keeps, the run it belongs to, and the socket it is on now. A tab that
 * reconnects (or a server that restarted) finds the same identity by key.
 * Keyless joins create identities, so their number is bounded per address
 * and in total (IdentityLimits), and one unused for a day is forgotten.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  asWorkerId,
  asWorkerKey,
  type RunId,
  type WorkerBackend,
  type WorkerId,
  type WorkerKey,
} from '../../core/protocol';
import type { WorkersSnapshot } from '../../core/schema';
import { ProtocolFault } from '../protocol/fault';
import { DEFAULT_IDENTITY_LIMITS, addressKey, type IdentityLimits } from '../protocol/limits';

export type { WorkersSnapshot } from '../../core/schema';

/** One worker's identity. */
export interface WorkerIdentity {
  readonly workerId: WorkerId;
  /** sha-256 of the key: the server can check a key without storing it. */
  readonly keyHash: string;
  name: string;
  /** As reported at the last join; not checkpointed, since a reconnecting tab says it again. */
  backend: WorkerBackend | null;
  runId: RunId | null;
  socketId: string | null;
  /**
   * addressKey of the address whose keyless join created it; null when not known (identities stored before it was
   * kept).
   */
  readonly address: string | null;
  /**
   * Server clock (ms) when it last joined, reconnected or lost its socket: it expires that long after, unless a socket
   * holds it.
   */
  lastUsedAt: number;
  /** A worker the server simulates itself (server/run/simulated.ts): never checkpointed, gone after a restart. */
  readonly simulated: boolean;
}

/** The address simulated workers are counted under. */
const SIMULATED_ADDRESS = 'simulated';

function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Every identity the server knows, by id and by key. */
export class WorkerRegistry {
  readonly #byId = new Map<WorkerId, WorkerIdentity>();
  readonly #byKeyHash = new Map<string, WorkerIdentity>();
  /** Identities held per address key. */
  readonly #perAddress = new Map<string, number>();
  #nextId = 1;
  readonly #limits: IdentityLimits;
  readonly #now: () => number;

  constructor(limits: Partial<IdentityLimits> = {}, now: () => number = Date.now) {
    this.#limits = { ...DEFAULT_IDENTITY_LIMITS, ...limits };
    this.#now = now;
  }

  get limits(): IdentityLimits {
    return this.#limits;
  }

  /**
   * A new identity for a keyless join from `address` and its key (the only
   * time the key exists on the server); throws ProtocolFault
   * 'too-many-workers' when a bound is reached.
   */
  create(name: string | undefined, address: string, simulated = false): { identity: WorkerIdentity; key: WorkerKey } {
    const { maxTotal, maxPerAddress } = this.#limits;
    if (this.#byId.size >= maxTotal) {
      throw new ProtocolFault(
        'too-many-workers',
        `the server already holds ${maxTotal} workers (MAX_WORKERS); ` +
          `rejoin with your stored key, or wait until unused ones expire`,
      );
    }
    const from = simulated ? SIMULATED_ADDRESS : addressKey(address);
    if ((this.#perAddress.get(from) ?? 0) >= maxPerAddress) {
      throw new ProtocolFault(
        'too-many-workers',
        `your address already holds ${maxPerAddress} workers (MAX_WORKERS_PER_ADDRESS); ` +
          `rejoin with a stored key, or ask the teacher to raise the limit`,
      );
    }
    const key = asWorkerKey(randomBytes(16).toString('hex'));
    const workerId = asWorkerId(this.#nextId++);
    const identity: WorkerIdentity = {
      workerId,
      keyHash: hashKey(key),
      name: name ?? `worker ${workerId}`,
      backend: null,
      runId: null,
      socketId: null,
      address: from,
      lastUsedAt: this.#now(),
      simulated,
    };
    this.#add(identity);
    return { identity, key };
  }

  /** The identity a key belongs to. */
  findByKey(key: string): WorkerIdentity | undefined {
    return this.#byKeyHash.get(hashKey(key));
  }

  get(workerId: WorkerId): WorkerIdentity | undefined {
    return this.#byId.get(workerId);
  }

  /** An identity was just used (joined, reconnected, or lost its socket): its idle time starts again. */
  touch(identity: WorkerIdentity): void {
    identity.lastUsedAt = this.#now();
  }

  /** Identities with no socket, unused for longer than the idle expiry. */
  expired(): WorkerIdentity[] {
    const cutoff = this.#now() - this.#limits.idleExpiryMs;
    return [...this.#byId.values()].filter((identity) => identity.socketId === null && identity.lastUsedAt < cutoff);
  }

  /** Forgets an identity: its key no longer joins. */
  remove(workerId: WorkerId): void {
    const identity = this.#byId.get(workerId);
    if (!identity) return;
    this.#byId.delete(workerId);
    this.#byKeyHash.delete(identity.keyHash);
    if (identity.address !== null) {
      const left = (this.#perAddress.get(identity.address) ?? 1) - 1;
      if (left > 0) this.#perAddress.set(identity.address, left);
      else this.#perAddress.delete(identity.address);
    }
  }

  all(): IterableIterator<WorkerIdentity> {
    return this.#byId.values();
  }

  get size(): number {
    return this.#byId.size;
  }

  /**
   * What workers.json stores. An identity with a socket is in use now, so its last use is now: after a restart it
   * gets the whole idle time to rejoin, however long ago it joined (a tab connected all lesson long would otherwise
   * be forgotten by the first keyless join after the restart, before it could come back).
   */
  snapshot(): WorkersSnapshot {
    const now = this.#now();
    return {
      nextId: this.#nextId,
      workers: [...this.#byId.values()]
        .filter((identity) => !identity.simulated)
        .map(({ workerId, keyHash, name, runId, address, lastUsedAt, socketId }) => ({
          workerId,
          keyHash,
          name,
          runId,
          address,
          lastUsedAt: socketId === null ? lastUsedAt : now,
        })),
    };
  }

  /** Loads identities from a checkpoint (validated by core/schema); all start disconnected. */
  restore(snapshot: WorkersSnapshot, runExists: (runId: string) => boolean): void {
    this.#nextId = Math.max(this.#nextId, snapshot.nextId);
    const now = this.#now();
    for (const w of snapshot.workers) {
      const runId = w.runId !== null && runExists(w.runId) ? (w.runId as RunId) : null;
      this.#add({
        workerId: asWorkerId(w.workerId),
        keyHash: w.keyHash,
        name: w.name,
        backend: null,
        runId,
        socketId: null,
        address: w.address ?? null,
        // Stored before use was recorded: its idle time starts now.
        lastUsedAt: Math.min(w.lastUsedAt ?? now, now),
        simulated: false,
      });
      this.#nextId = Math.max(this.#nextId, w.workerId + 1);
    }
  }

  #add(identity: WorkerIdentity): void {
    this.#byId.set(identity.workerId, identity);
    this.#byKeyHash.set(identity.keyHash, identity);
    if (identity.address !== null)
      this.#perAddress.set(identity.address, (this.#perAddress.get(identity.address) ?? 0) + 1);
  }
}
