/**
 * Which worker this tab is. Worker keys live in localStorage so a closed and
 * reopened tab comes back as the same worker (docs/protocol.md, worker:join).
 * Several tabs of one browser share localStorage, yet each must be its own
 * worker: the keys form a pool, and a tab holds a Web Lock named after the
 * key it uses for as long as it lives. A new tab takes the first key whose
 * lock is free (a closed tab's), or asks the server for a new identity.
 */
import { asWorkerKey, type WorkerKey } from '../../core/protocol';

const POOL_KEY = 'atomo-swarm.workerKeys';
const LOCK_PREFIX = 'atomo-swarm.worker.';

function readPool(storage: Storage): WorkerKey[] {
  try {
    const parsed: unknown = JSON.parse(storage.getItem(POOL_KEY) ?? '[]');
    return Array.isArray(parsed) ? parsed.filter((k): k is string => typeof k === 'string').map(asWorkerKey) : [];
  } catch {
    return [];
  }
}

function writePool(storage: Storage, keys: readonly WorkerKey[]): void {
  storage.setItem(POOL_KEY, JSON.stringify(keys));
}

/** Holds the lock of `key` until the page goes away; resolves whether it was free. */
function holdLock(locks: LockManager, key: WorkerKey): Promise<boolean> {
  return new Promise((resolve) => {
    void locks.request(`${LOCK_PREFIX}${key}`, { ifAvailable: true }, (lock) => {
      resolve(lock !== null);
      // Never settles while the tab lives: closing it releases the lock.
      return lock === null ? undefined : new Promise<never>(() => {});
    });
  });
}

/**
 * Where a worker keeps its key, whatever hosts it: a tab (localStorage and
 * Web Locks, below), a Web Worker or a Node thread (`memoryIdentity`, or
 * one the host backs with its own storage). The session only sees this.
 */
export interface IdentityStore {
  /** The key to join with, or null: join without one and `adopt` the answer. */
  readonly key: WorkerKey | null;
  /** Records a key the server issued. */
  adopt(key: WorkerKey): Promise<void>;
  /** Forgets a key the server no longer knows. */
  forget(): void;
}

/** An identity held in memory only (headless workers, tests): it lasts as long as the object. */
export function memoryIdentity(key: WorkerKey | null = null): IdentityStore {
  let held = key;
  return {
    get key() {
      return held;
    },
    adopt: async (next) => {
      held = next;
    },
    forget: () => {
      held = null;
    },
  };
}

/** The identity a tab holds: its key (null until the server gives one), kept in the pool and locked. */
export class WorkerIdentity implements IdentityStore {
  #key: WorkerKey | null;
  readonly #storage: Storage;
  readonly #locks: LockManager | undefined;

  constructor(key: WorkerKey | null, storage: Storage, locks: LockManager | undefined) {
    this.#key = key;
    this.#storage = storage;
    this.#locks = locks;
  }

  /** The key to join with, or null: join without one and `adopt` the answer. */
  get key(): WorkerKey | null {
    return this.#key;
  }

  /** Records a key the server issued and holds its lock for this tab's life. */
  async adopt(key: WorkerKey): Promise<void> {
    if (key === this.#key) return;
    this.#key = key;
    const pool = readPool(this.#storage);
    if (!pool.includes(key)) writePool(this.#storage, [...pool, key]);
    if (this.#locks !== undefined) await holdLock(this.#locks, key);
  }

  /** Forgets a key the server no longer knows (removed, or another server's data). */
  forget(): void {
    const gone = this.#key;
    if (gone === null) return;
    writePool(
      this.#storage,
      readPool(this.#storage).filter((k) => k !== gone),
    );
    this.#key = null;
  }
}

/**
 * Claims a worker identity for this tab: a free key from the pool, or none.
 * Without Web Locks (old browsers) the first key is shared by every tab.
 */
export async function claimWorkerIdentity(
  storage: Storage = localStorage,
  locks: LockManager | undefined = navigator.locks,
): Promise<WorkerIdentity> {
  let held: WorkerKey | null = null;
  if (locks === undefined) {
    held = readPool(storage)[0] ?? null;
  } else {
    for (const key of readPool(storage)) {
      if (await holdLock(locks, key)) {
        held = key;
        break;
      }
    }
  }
  return new WorkerIdentity(held, storage, locks);
}
