/**
 * The JSON part of a run checkpoint (everything but the weights), validated
 * on load: a checkpoint is a file on disk that a crash, a full disk or a
 * hand edit may have damaged, so it is parsed like any other untrusted input.
 */
import * as v from 'valibot';
import { DEFAULT_RUN_CONFIG, RunConfigSchema } from './runConfig';

const count = (field: string) =>
  v.pipe(
    v.number(`${field} must be a number`),
    v.finite(`${field} must be finite`),
    v.minValue(0, `${field} must be ≥ 0`),
  );
const index = (field: string) =>
  v.pipe(
    v.number(`${field} must be a number`),
    v.integer(`${field} must be an integer`),
    v.minValue(0, `${field} must be ≥ 0`),
    v.maxValue(Number.MAX_SAFE_INTEGER, `${field} is too large`),
  );

/** The output of `schema` for `raw`, or an Error naming `what` and the first problem's path. */
function parsed<S extends v.GenericSchema>(schema: S, raw: unknown, what: string): v.InferOutput<S> {
  const result = v.safeParse(schema, raw);
  if (result.success) return result.output;
  const issue = result.issues[0];
  const path = issue === undefined ? '' : (v.getDotPath(issue) ?? '');
  throw new Error(`${what} ${path ? `${path}: ` : ''}${issue?.message ?? 'invalid'}`);
}

/** Frames' bytes by category and direction (core/traffic); absent in checkpoints written before frames were counted. */
const trafficOf = (field: string) =>
  v.optional(
    v.object({
      gradientUp: count(`${field}.gradientUp`),
      controlUp: count(`${field}.controlUp`),
      modelDown: count(`${field}.modelDown`),
      controlDown: count(`${field}.controlDown`),
    }),
  );

/** One member's record. */
const MemberRecordSchema = v.object({
  workerId: v.pipe(index('members[].workerId'), v.maxValue(0xffffffff, 'members[].workerId must be a u32')),
  slot: index('members[].slot'),
  bytesUp: count('members[].bytesUp'),
  bytesDown: count('members[].bytesDown'),
  traffic: trafficOf('members[].traffic'),
  rounds: index('members[].rounds'),
});

/** A closed round's record: its version is checked; the figures are for charts only (kept as stored). */
const RoundRecordSchema = v.looseObject({ version: index('history[].version') });

export const CheckpointMetaSchema = v.object({
  runId: v.pipe(
    v.string('runId must be a string'),
    v.regex(/^[A-Za-z0-9_-]{1,64}$/, 'runId must be 1–64 URL-safe characters'),
  ),
  config: RunConfigSchema,
  status: v.picklist(
    ['created', 'running', 'paused', 'finished'],
    'status must be created, running, paused or finished',
  ),
  version: index('version'),
  history: v.array(RoundRecordSchema, 'history must be an array'),
  members: v.array(MemberRecordSchema, 'members must be an array'),
  bytesUp: count('bytesUp'),
  bytesDown: count('bytesDown'),
  traffic: trafficOf('traffic'),
  createdAt: count('createdAt'),
  parameterCount: v.pipe(index('parameterCount'), v.maxValue(1 << 28, 'parameterCount is too large')),
});

export type CheckpointMeta = v.InferOutput<typeof CheckpointMetaSchema>;

/**
 * Validates a checkpoint's JSON; throws Error naming the first problem.
 * Settings added since the checkpoint was written take their defaults.
 * The history must hold exactly one record per trained version, in order.
 */
export function parseCheckpointMeta(raw: unknown): CheckpointMeta {
  const withDefaults =
    typeof raw === 'object' &&
    raw !== null &&
    typeof (raw as { config?: unknown }).config === 'object' &&
    (raw as { config?: unknown }).config !== null
      ? { ...raw, config: { ...DEFAULT_RUN_CONFIG, ...(raw as { config: object }).config } }
      : raw;
  const meta = parsed(CheckpointMetaSchema, withDefaults, 'checkpoint');
  if (meta.history.length !== meta.version)
    throw new Error(`checkpoint at version ${meta.version} holds ${meta.history.length} round records`);
  meta.history.forEach((record, i) => {
    if (record.version !== i) throw new Error(`checkpoint history[${i}] is for version ${record.version}`);
  });
  const slots = new Set<number>();
  const ids = new Set<number>();
  for (const m of meta.members) {
    if (slots.has(m.slot) || ids.has(m.workerId))
      throw new Error(`checkpoint lists worker ${m.workerId} or slot ${m.slot} twice`);
    slots.add(m.slot);
    ids.add(m.workerId);
  }
  return meta;
}

/** One identity in workers.json. */
const StoredIdentitySchema = v.object({
  workerId: v.pipe(
    index('workers[].workerId'),
    v.minValue(1, 'workers[].workerId must be ≥ 1'),
    v.maxValue(0xffffffff, 'workers[].workerId must be a u32'),
  ),
  keyHash: v.pipe(
    v.string('workers[].keyHash must be a string'),
    v.regex(/^[0-9a-f]{64}$/, 'workers[].keyHash must be a sha-256 in hex'),
  ),
  name: v.pipe(v.string('workers[].name must be a string'), v.maxLength(256, 'workers[].name is too long')),
  runId: v.nullable(
    v.pipe(v.string('workers[].runId must be a string or null'), v.maxLength(64, 'workers[].runId is too long')),
  ),
  /** Absent in files written before identities were bounded per address. */
  address: v.optional(
    v.nullable(
      v.pipe(v.string('workers[].address must be a string'), v.maxLength(64, 'workers[].address is too long')),
    ),
  ),
  /** Absent in files written before identities expired. */
  lastUsedAt: v.optional(count('workers[].lastUsedAt')),
});

const WorkersSnapshotSchema = v.object({
  nextId: v.pipe(
    index('nextId'),
    v.minValue(1, 'nextId must be at least 1'),
    v.maxValue(0x100000000, 'nextId is too large'),
  ),
  workers: v.array(StoredIdentitySchema, 'workers must be an array'),
});

/** What workers.json holds: the identities and the next id to give. */
export type WorkersSnapshot = v.InferOutput<typeof WorkersSnapshotSchema>;

/** Validates workers.json's content; throws Error naming the first problem (ids and keys must be unique). */
export function parseWorkersSnapshot(raw: unknown): WorkersSnapshot {
  const snapshot = parsed(WorkersSnapshotSchema, raw, 'workers.json');
  const ids = new Set<number>();
  const keys = new Set<string>();
  for (const w of snapshot.workers) {
    if (ids.has(w.workerId) || keys.has(w.keyHash))
      throw new Error(`workers.json lists worker ${w.workerId} or its key twice`);
    ids.add(w.workerId);
    keys.add(w.keyHash);
  }
  return snapshot;
}
