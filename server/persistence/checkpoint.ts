/**
 * Checkpoints: each run in `<dataDir>/runs/<id>.ckpt`,
 * the worker identities in `<dataDir>/workers.json`. Every write goes to a
 * temporary file that is then renamed over the old one, so a crash leaves
 * either the previous or the new checkpoint, never half of one. Writes of
 * one file are serialised, and a write requested while one is in flight is
 * coalesced into a single follow-up carrying the latest state; a snapshot is
 * encoded only when it is written, so the coalesced ones cost nothing.
 *
 * The previous checkpoint of a run is kept as `<id>.ckpt.prev`. On load each
 * checkpoint is parsed and validated (the JSON against core/schema, shapes
 * against the model's layout, every weight and momentum finite, the history
 * one record per version); a damaged one is moved aside to
 * `<name>.bad-<time>` with a log line saying why, and the run restarts from
 * the previous one. A snapshot that is not finite is never written.
 *
 * Run file layout (little-endian):
 *   8 bytes  magic "ATOMOCKP"
 *   u32      format version (1)
 *   u32      JSON length J
 *   J bytes  JSON: everything but the weights (config, status, version, history, members, totals)
 *   4·P      params, float32
 *   4·P      velocity, float32
 */
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createModelLayout } from '../../core/model/layout';
import { asModelVersion, asRunId, asWorkerId, type RoundMetrics } from '../../core/protocol';
import { parseCheckpointMeta, parseWorkersSnapshot } from '../../core/schema';
import { firstNonFinite } from '../../core/codec/floats';
import type { RunSnapshot } from '../run/run';
import type { WorkersSnapshot } from '../run/workers';

const MAGIC = 'ATOMOCKP';
const FORMAT_VERSION = 1;
const RUN_SUFFIX = '.ckpt';
const PREVIOUS_SUFFIX = '.ckpt.prev';

/** A stored run plus when it was created (runs are listed in creation order). */
export interface StoredRun {
  readonly snapshot: RunSnapshot;
  readonly createdAt: number;
}

/** Serialises a run snapshot into the checkpoint format. */
export function encodeCheckpoint(stored: StoredRun): Buffer {
  const { snapshot } = stored;
  const { params, velocity, ...rest } = snapshot;
  for (const [name, values] of [
    ['weights', params],
    ['momentum', velocity],
  ] as const) {
    const bad = firstNonFinite(values);
    if (bad >= 0)
      throw new Error(`run ${snapshot.runId}: refusing to checkpoint non-finite ${name} (parameter ${bad})`);
  }
  const json = Buffer.from(
    JSON.stringify({ ...rest, createdAt: stored.createdAt, parameterCount: params.length }),
    'utf8',
  );
  const header = Buffer.alloc(16);
  header.write(MAGIC, 0, 'ascii');
  header.writeUInt32LE(FORMAT_VERSION, 8);
  header.writeUInt32LE(json.length, 12);
  return Buffer.concat([
    header,
    json,
    Buffer.from(params.buffer, params.byteOffset, params.byteLength),
    Buffer.from(velocity.buffer, velocity.byteOffset, velocity.byteLength),
  ]);
}

/** Parses and validates a checkpoint; throws Error naming what is wrong. */
export function decodeCheckpoint(bytes: Buffer): StoredRun {
  if (bytes.length < 16 || bytes.toString('ascii', 0, 8) !== MAGIC) throw new Error('not a run checkpoint');
  const version = bytes.readUInt32LE(8);
  if (version !== FORMAT_VERSION) throw new Error(`checkpoint format ${version}, expected ${FORMAT_VERSION}`);
  const jsonLength = bytes.readUInt32LE(12);
  if (16 + jsonLength > bytes.length)
    throw new Error(`checkpoint JSON of ${jsonLength} bytes runs past the end of the file`);
  let raw: unknown;
  try {
    raw = JSON.parse(bytes.toString('utf8', 16, 16 + jsonLength));
  } catch (error) {
    throw new Error(`checkpoint JSON does not parse: ${(error as Error).message}`, { cause: error });
  }
  const meta = parseCheckpointMeta(raw);
  const count = meta.parameterCount;
  const expected = createModelLayout(meta.config.model).parameterCount;
  if (count !== expected) throw new Error(`checkpoint holds ${count} parameters, ${meta.config.model} has ${expected}`);
  const start = 16 + jsonLength;
  if (bytes.length !== start + 8 * count)
    throw new Error(`checkpoint holds ${bytes.length - start} weight bytes, expected ${8 * count}`);
  // Copies: a Buffer slice may sit at an offset that is not a multiple of 4.
  const floats = (offset: number) =>
    new Float32Array(new Uint8Array(bytes.subarray(offset, offset + 4 * count)).buffer);
  const params = floats(start);
  const velocity = floats(start + 4 * count);
  for (const [name, values] of [
    ['weights', params],
    ['momentum', velocity],
  ] as const) {
    const bad = firstNonFinite(values);
    if (bad >= 0) throw new Error(`checkpoint ${name} are not finite at parameter ${bad}`);
  }
  const { createdAt, parameterCount: _count, traffic, ...rest } = meta;
  return {
    createdAt,
    snapshot: {
      ...rest,
      ...(traffic === undefined ? {} : { traffic }),
      runId: asRunId(rest.runId),
      version: asModelVersion(rest.version),
      // The records exactly as the server wrote them (the schema checked their versions only).
      history: (raw as { history: RoundMetrics[] }).history,
      members: rest.members.map(({ traffic: frames, ...m }) => ({
        ...m,
        ...(frames === undefined ? {} : { traffic: frames }),
        workerId: asWorkerId(m.workerId),
      })),
      params,
      velocity,
    },
  };
}

/** Writes `data` to `path` atomically: temp file, fsync, rename. */
async function writeAtomic(path: string, data: Uint8Array, keepPrevious: string | null = null): Promise<void> {
  const temp = `${path}.tmp-${process.pid}`;
  const handle = await open(temp, 'w');
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  // The current file becomes the previous one; a crash between the renames leaves the previous one to load.
  if (keepPrevious !== null)
    await rename(path, keepPrevious).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  await rename(temp, path);
}

/** Renames a damaged file to `<path>.bad-<time>` (kept for a post-mortem) and returns the new name. */
async function moveAside(path: string): Promise<string> {
  const aside = `${path}.bad-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  await rename(path, aside).catch(() => undefined);
  return aside;
}

/** The checkpoint directory of a server. */
export class CheckpointStore {
  readonly #runsDir: string;
  readonly #workersFile: string;
  /** Per file: the write in flight, and the latest data waiting behind it. */
  readonly #writers = new Map<string, { inFlight: Promise<void>; pending: (() => Uint8Array | null) | null }>();
  readonly #onError: (error: unknown) => void;

  constructor(dataDir: string, onError: (error: unknown) => void) {
    this.#runsDir = join(dataDir, 'runs');
    this.#workersFile = join(dataDir, 'workers.json');
    this.#onError = onError;
  }

  /** Creates the directory; call once before anything else. */
  async init(): Promise<void> {
    await mkdir(this.#runsDir, { recursive: true });
  }

  /**
   * Schedules a write of a run (the snapshot was taken at a round boundary by the caller). It is encoded only when
   * its turn to be written comes: a newer snapshot of the same run saved meanwhile replaces it unencoded, so a burst
   * of joins (a whole class reconnecting after a restart) costs one encoding, not one per join. A snapshot that is not
   * finite is never written (encodeCheckpoint refuses it; the error is reported).
   */
  saveRun(stored: StoredRun): void {
    const path = this.#runPath(stored.snapshot.runId);
    this.#write(path, () => encodeCheckpoint(stored), `${path}.prev`);
  }

  /** Schedules a write of the worker identities (serialised when written, as saveRun). */
  saveWorkers(snapshot: WorkersSnapshot): void {
    this.#write(this.#workersFile, () => Buffer.from(JSON.stringify(snapshot), 'utf8'));
  }

  /** Removes a run's checkpoint (after any write in flight). */
  deleteRun(runId: string): void {
    const path = this.#runPath(runId);
    this.#write(path, () => null, `${path}.prev`);
  }

  /** Waits until every scheduled write has reached the disk. */
  async flush(): Promise<void> {
    while (this.#writers.size > 0) await Promise.all([...this.#writers.values()].map((w) => w.inFlight));
  }

  /**
   * Every stored run in creation order, and the identities. A checkpoint that
   * does not parse or validate is moved aside and the run's previous
   * checkpoint is loaded instead; each is reported with a clear line.
   */
  async load(): Promise<{ runs: StoredRun[]; workers: WorkersSnapshot | null }> {
    const runs: StoredRun[] = [];
    const names = await readdir(this.#runsDir);
    const ids = new Set<string>();
    for (const name of names) {
      if (name.endsWith(RUN_SUFFIX)) ids.add(name.slice(0, -RUN_SUFFIX.length));
      else if (name.endsWith(PREVIOUS_SUFFIX)) ids.add(name.slice(0, -PREVIOUS_SUFFIX.length));
    }
    for (const id of [...ids].sort()) {
      const loaded =
        (await this.#loadFile(id, `${id}${RUN_SUFFIX}`, names)) ??
        (await this.#loadFile(id, `${id}${PREVIOUS_SUFFIX}`, names));
      if (loaded) runs.push(loaded);
      else this.#onError(new Error(`checkpoint: run ${id} has no valid checkpoint left; it is not restored`));
    }
    runs.sort((a, b) => a.createdAt - b.createdAt);
    return { runs, workers: await this.#loadWorkers() };
  }

  /**
   * The identities, validated; a damaged workers.json is moved aside (reported) and null returned: workers join anew.
   */
  async #loadWorkers(): Promise<WorkersSnapshot | null> {
    let text: string;
    try {
      text = await readFile(this.#workersFile, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.#onError(error);
      return null;
    }
    try {
      return parseWorkersSnapshot(JSON.parse(text));
    } catch (error) {
      const aside = await moveAside(this.#workersFile);
      this.#onError(
        new Error(
          `workers.json is damaged (${(error as Error).message}); moved aside to ${aside}; workers join as new ones`,
        ),
      );
      return null;
    }
  }

  /** Loads one checkpoint file; a damaged one is moved aside (reported) and null returned. */
  async #loadFile(runId: string, name: string, present: readonly string[]): Promise<StoredRun | null> {
    if (!present.includes(name)) return null;
    const path = join(this.#runsDir, name);
    try {
      const stored = decodeCheckpoint(await readFile(path));
      if (stored.snapshot.runId !== runId) throw new Error(`it holds run ${stored.snapshot.runId}`);
      if (name.endsWith(PREVIOUS_SUFFIX))
        this.#onError(
          new Error(
            `checkpoint: run ${runId} restarts from its previous checkpoint ${name} ` +
              `(version ${stored.snapshot.version})`,
          ),
        );
      return stored;
    } catch (error) {
      const aside = await moveAside(path);
      this.#onError(new Error(`checkpoint ${name} is damaged (${(error as Error).message}); moved aside to ${aside}`));
      return null;
    }
  }

  #runPath(runId: string): string {
    return join(this.#runsDir, `${runId}${RUN_SUFFIX}`);
  }

  /** `produce` returns the bytes to write, or null to delete the file. */
  #write(path: string, produce: () => Uint8Array | null, previous: string | null = null): void {
    const writer = this.#writers.get(path);
    if (writer) {
      writer.pending = produce;
      return;
    }
    const entry: { inFlight: Promise<void>; pending: (() => Uint8Array | null) | null } = {
      inFlight: Promise.resolve(),
      pending: null,
    };
    const run = async (next: () => Uint8Array | null): Promise<void> => {
      try {
        const data = next();
        if (data === null) {
          await rm(path, { force: true });
          if (previous !== null) await rm(previous, { force: true });
        } else {
          await writeAtomic(path, data, previous);
        }
      } catch (error) {
        this.#onError(error);
      }
      const pending = entry.pending;
      entry.pending = null;
      if (pending) await run(pending);
    };
    entry.inFlight = run(produce).finally(() => this.#writers.delete(path));
    this.#writers.set(path, entry);
  }
}
