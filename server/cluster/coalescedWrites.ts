/**
 * Writes to Redis, coalesced per key: at most one in flight and one waiting, each caller told when its state is
 * durable.
 */
export class CoalescedWrites {
  readonly #entries = new Map<
    string,
    { inFlight: Promise<void>; next: (() => Promise<void>) | null; nextDone: Promise<void> | null }
  >();

  write(key: string, job: () => Promise<void>): Promise<void> {
    const entry = this.#entries.get(key);
    if (entry !== undefined) {
      entry.next = job;
      entry.nextDone ??= entry.inFlight.then(() => {
        const next = entry.next!;
        entry.next = null;
        entry.nextDone = null;
        return this.#run(key, entry, next);
      });
      return entry.nextDone;
    }
    const created = { inFlight: Promise.resolve(), next: null, nextDone: null };
    this.#entries.set(key, created);
    return this.#run(key, created, job);
  }

  #run(key: string, entry: { inFlight: Promise<void>; next: unknown }, job: () => Promise<void>): Promise<void> {
    const done = job();
    entry.inFlight = done.then(
      () => undefined,
      () => undefined,
    );
    void entry.inFlight.then(() => {
      if (entry.next === null && this.#entries.get(key) === entry) this.#entries.delete(key);
    });
    return done;
  }
}
