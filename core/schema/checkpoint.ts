/**
 * The JSON part of a run checkpoint (everything but the weights), validated
 * on load: a checkpoint is a file on disk that a crash, a full disk or a
 * hand edit may have damaged, so it is parsed like any other untrusted input.
 */
import * as v from 'valibot';
import { DEFAULT_RUN_CONFIG, RunConfigSchema } from './runConfig';

const count = (field: string) => v.pipe(v.number(`${field} must be a number`), v.finite(`${field} must be finite`), v.minValue(0, `${field} must be ≥ 0`));
const index = (field: string) =>
  v.pipe(
    v.number(`${field} must be a number`),
    v.integer(`${field} must be an integer`),
    v.minValue(0, `${field} must be ≥ 0`),
    v.maxValue(Number.MAX_SAFE_INTEGER, `${field} is too large`),
  );

/** One member's record. */
const MemberRecordSchema = v.object({
  workerId: v.pipe(index('members[].workerId'), v.maxValue(0xffffffff, 'members[].workerId must be a u32')),
  slot: index('members[].slot'),
  bytesUp: count('members[].bytesUp'),
  bytesDown: count('members[].bytesDown'),
  rounds: index('members[].rounds'),
});

/** A closed round's record: its version is checked; the figures are for charts only (kept as stored). */
const RoundRecordSchema = v.looseObject({ version: index('history[].version') });

export const CheckpointMetaSchema = v.object({
  runId: v.pipe(v.string('runId must be a string'), v.regex(/^[A-Za-z0-9_-]{1,64}$/, 'runId must be 1–64 URL-safe characters')),
  config: RunConfigSchema,
  status: v.picklist(['created', 'running', 'paused', 'finished'], 'status must be created, running, paused or finished'),
  version: index('version'),
  history: v.array(RoundRecordSchema, 'history must be an array'),
  members: v.array(MemberRecordSchema, 'members must be an array'),
  bytesUp: count('bytesUp'),
  bytesDown: count('bytesDown'),
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
    typeof raw === 'object' && raw !== null && typeof (raw as { config?: unknown }).config === 'object' && (raw as { config?: unknown }).config !== null
      ? { ...raw, config: { ...DEFAULT_RUN_CONFIG, ...(raw as { config: object }).config } }
      : raw;
  const result = v.safeParse(CheckpointMetaSchema, withDefaults);
  if (!result.success) {
    const issue = result.issues[0];
    const path = issue === undefined ? '' : (v.getDotPath(issue) ?? '');
    throw new Error(`checkpoint ${path ? `${path}: ` : ''}${issue?.message ?? 'invalid'}`);
  }
  const meta = result.output;
  if (meta.history.length !== meta.version) throw new Error(`checkpoint at version ${meta.version} holds ${meta.history.length} round records`);
  meta.history.forEach((record, i) => {
    if (record.version !== i) throw new Error(`checkpoint history[${i}] is for version ${record.version}`);
  });
  const slots = new Set<number>();
  const ids = new Set<number>();
  for (const m of meta.members) {
    if (slots.has(m.slot) || ids.has(m.workerId)) throw new Error(`checkpoint lists worker ${m.workerId} or slot ${m.slot} twice`);
    slots.add(m.slot);
    ids.add(m.workerId);
  }
  return meta;
}
