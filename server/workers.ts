/**
 * Worker identities: a public WorkerId, the hash of the secret key the tab
 * keeps, the run it belongs to, and the socket it is on now. A tab that
 * reconnects (or a server that restarted) finds the same identity by key.
 */
import { createHash, randomBytes } from 'node:crypto';
import { asWorkerId, asWorkerKey, type RunId, type WorkerBackend, type WorkerId, type WorkerKey } from '../core/protocol';

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
}

/** What workers.json holds. */
export interface WorkersSnapshot {
  readonly nextId: number;
  readonly workers: readonly { workerId: number; keyHash: string; name: string; runId: string | null }[];
}

function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Every identity the server knows, by id and by key. */
export class WorkerRegistry {
  readonly #byId = new Map<WorkerId, WorkerIdentity>();
  readonly #byKeyHash = new Map<string, WorkerIdentity>();
  #nextId = 1;

  /** A new identity and its key (the only time the key exists on the server). */
  create(name: string | undefined): { identity: WorkerIdentity; key: WorkerKey } {
    const key = asWorkerKey(randomBytes(16).toString('hex'));
    const workerId = asWorkerId(this.#nextId++);
    const identity: WorkerIdentity = { workerId, keyHash: hashKey(key), name: name ?? `worker ${workerId}`, backend: null, runId: null, socketId: null };
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

  /** Forgets an identity: its key no longer joins. */
  remove(workerId: WorkerId): void {
    const identity = this.#byId.get(workerId);
    if (!identity) return;
    this.#byId.delete(workerId);
    this.#byKeyHash.delete(identity.keyHash);
  }

  all(): IterableIterator<WorkerIdentity> {
    return this.#byId.values();
  }

  snapshot(): WorkersSnapshot {
    return {
      nextId: this.#nextId,
      workers: [...this.#byId.values()].map(({ workerId, keyHash, name, runId }) => ({ workerId, keyHash, name, runId })),
    };
  }

  /** Loads identities from a checkpoint; all start disconnected. */
  restore(snapshot: WorkersSnapshot, runExists: (runId: string) => boolean): void {
    this.#nextId = Math.max(this.#nextId, snapshot.nextId);
    for (const w of snapshot.workers) {
      const runId = w.runId !== null && runExists(w.runId) ? (w.runId as RunId) : null;
      this.#add({ workerId: asWorkerId(w.workerId), keyHash: w.keyHash, name: w.name, backend: null, runId, socketId: null });
      this.#nextId = Math.max(this.#nextId, w.workerId + 1);
    }
  }

  #add(identity: WorkerIdentity): void {
    this.#byId.set(identity.workerId, identity);
    this.#byKeyHash.set(identity.keyHash, identity);
  }
}
