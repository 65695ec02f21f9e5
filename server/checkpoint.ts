/**
 * Checkpoints (issue 5 §Checkpoints): each run in `<dataDir>/runs/<id>.ckpt`,
 * the worker identities in `<dataDir>/workers.json`. Every write goes to a
 * temporary file that is then renamed over the old one, so a crash leaves
 * either the previous or the new checkpoint, never half of one. Writes of
 * one file are serialised, and a write requested while one is in flight is
 * coalesced into a single follow-up carrying the latest state.
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
import { asModelVersion, asRunId, asWorkerId } from '../core/protocol';
import type { RunSnapshot } from './run';
import type { WorkersSnapshot } from './workers';

const MAGIC = 'ATOMOCKP';
const FORMAT_VERSION = 1;
const RUN_SUFFIX = '.ckpt';

/** A stored run plus when it was created (runs are listed in creation order). */
export interface StoredRun {
  readonly snapshot: RunSnapshot;
  readonly createdAt: number;
}

/** Serialises a run snapshot into the checkpoint format. */
export function encodeCheckpoint(stored: StoredRun): Buffer {
  const { snapshot } = stored;
  const { params, velocity, ...rest } = snapshot;
  const json = Buffer.from(JSON.stringify({ ...rest, createdAt: stored.createdAt, parameterCount: params.length }), 'utf8');
  const header = Buffer.alloc(16);
  header.write(MAGIC, 0, 'ascii');
  header.writeUInt32LE(FORMAT_VERSION, 8);
  header.writeUInt32LE(json.length, 12);
  return Buffer.concat([header, json, Buffer.from(params.buffer, params.byteOffset, params.byteLength), Buffer.from(velocity.buffer, velocity.byteOffset, velocity.byteLength)]);
}

/** Parses a checkpoint; throws Error naming what is wrong. */
export function decodeCheckpoint(bytes: Buffer): StoredRun {
  if (bytes.length < 16 || bytes.toString('ascii', 0, 8) !== MAGIC) throw new Error('not a run checkpoint');
  const version = bytes.readUInt32LE(8);
  if (version !== FORMAT_VERSION) throw new Error(`checkpoint format ${version}, expected ${FORMAT_VERSION}`);
  const jsonLength = bytes.readUInt32LE(12);
  const meta = JSON.parse(bytes.toString('utf8', 16, 16 + jsonLength)) as Omit<RunSnapshot, 'params' | 'velocity'> & { createdAt: number; parameterCount: number };
  const count = meta.parameterCount;
  const start = 16 + jsonLength;
  if (bytes.length !== start + 8 * count) throw new Error(`checkpoint holds ${bytes.length - start} weight bytes, expected ${8 * count}`);
  // Copies: a Buffer slice may sit at an offset that is not a multiple of 4.
  const floats = (offset: number) => new Float32Array(new Uint8Array(bytes.subarray(offset, offset + 4 * count)).buffer);
  const { createdAt, parameterCount: _count, ...rest } = meta;
  return {
    createdAt,
    snapshot: {
      ...rest,
      runId: asRunId(rest.runId),
      version: asModelVersion(rest.version),
      members: rest.members.map((m) => ({ ...m, workerId: asWorkerId(m.workerId) })),
      params: floats(start),
      velocity: floats(start + 4 * count),
    },
  };
}

/** Writes `data` to `path` atomically: temp file, fsync, rename. */
async function writeAtomic(path: string, data: Uint8Array): Promise<void> {
  const temp = `${path}.tmp-${process.pid}`;
  const handle = await open(temp, 'w');
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, path);
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

  /** Schedules a write of a run (the snapshot was taken at a round boundary by the caller). */
  saveRun(stored: StoredRun): void {
    const data = encodeCheckpoint(stored);
    this.#write(this.#runPath(stored.snapshot.runId), () => data);
  }

  /** Schedules a write of the worker identities. */
  saveWorkers(snapshot: WorkersSnapshot): void {
    const data = Buffer.from(JSON.stringify(snapshot), 'utf8');
    this.#write(this.#workersFile, () => data);
  }

  /** Removes a run's checkpoint (after any write in flight). */
  deleteRun(runId: string): void {
    const path = this.#runPath(runId);
    this.#write(path, () => null);
  }

  /** Waits until every scheduled write has reached the disk. */
  async flush(): Promise<void> {
    while (this.#writers.size > 0) await Promise.all([...this.#writers.values()].map((w) => w.inFlight));
  }

  /** Every stored run in creation order (unreadable files are reported and skipped), and the identities. */
  async load(): Promise<{ runs: StoredRun[]; workers: WorkersSnapshot | null }> {
    const runs: StoredRun[] = [];
    for (const name of await readdir(this.#runsDir)) {
      if (!name.endsWith(RUN_SUFFIX)) continue;
      try {
        runs.push(decodeCheckpoint(await readFile(join(this.#runsDir, name))));
      } catch (error) {
        this.#onError(new Error(`skipping checkpoint ${name}: ${(error as Error).message}`));
      }
    }
    runs.sort((a, b) => a.createdAt - b.createdAt);
    let workers: WorkersSnapshot | null = null;
    try {
      workers = JSON.parse(await readFile(this.#workersFile, 'utf8')) as WorkersSnapshot;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.#onError(error);
    }
    return { runs, workers };
  }

  #runPath(runId: string): string {
    return join(this.#runsDir, `${runId}${RUN_SUFFIX}`);
  }

  /** `produce` returns the bytes to write, or null to delete the file. */
  #write(path: string, produce: () => Uint8Array | null): void {
    const writer = this.#writers.get(path);
    if (writer) {
      writer.pending = produce;
      return;
    }
    const entry: { inFlight: Promise<void>; pending: (() => Uint8Array | null) | null } = { inFlight: Promise.resolve(), pending: null };
    const run = async (next: () => Uint8Array | null): Promise<void> => {
      try {
        const data = next();
        if (data === null) await rm(path, { force: true });
        else await writeAtomic(path, data);
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
