/**
 * The classroom's simulated attacker: the teacher marks a worker, and the
 * server replaces each estimate it accepts from that worker by a scaled or
 * sign-flipped copy before aggregation, as a malicious student would send.
 * It shows why the robust rules exist: the mean follows the attacker, the
 * norm bound, median and trimmed mean do not.
 */
import * as v from 'valibot';

/** Largest attack factor (finite, so the estimate still decodes as an attacker's would). */
export const MAX_ATTACK_FACTOR = 1e6;

const factor = v.pipe(
  v.number('attack.factor must be a number'),
  v.finite('attack.factor must be finite'),
  v.minValue(1, `attack.factor must be in [1, ${MAX_ATTACK_FACTOR}]`),
  v.maxValue(MAX_ATTACK_FACTOR, `attack.factor must be in [1, ${MAX_ATTACK_FACTOR}]`),
);

/** scale: the estimate × factor; sign-flip: the estimate × −factor. */
export const WorkerAttackSchema = v.variant(
  'kind',
  [v.strictObject({ kind: v.literal('scale'), factor }), v.strictObject({ kind: v.literal('sign-flip'), factor })],
  'attack must be { kind: "scale" | "sign-flip", factor } or null',
);

export type WorkerAttack = v.InferOutput<typeof WorkerAttackSchema>;

/** worker:attack: mark a worker as an attacker, or null to make it honest again. */
export const AttackWorkerRequestSchema = v.strictObject({
  workerId: v.pipe(
    v.number('workerId must be a number'),
    v.integer('workerId must be an integer'),
    v.minValue(0, 'workerId must be ≥ 0'),
    v.maxValue(0xffffffff, 'workerId must be a u32'),
  ),
  attack: v.nullable(WorkerAttackSchema),
});

/** Validates a worker:attack request; returns the parsed value or the first problem. */
export function parseAttackWorkerRequest(
  raw: unknown,
): { ok: true; value: v.InferOutput<typeof AttackWorkerRequestSchema> } | { ok: false; message: string } {
  const result = v.safeParse(AttackWorkerRequestSchema, raw);
  return result.success
    ? { ok: true, value: result.output }
    : { ok: false, message: result.issues[0]?.message ?? 'invalid request' };
}

/**
 * What the attack multiplies an estimate by: ×factor (scale) or ×−factor (sign-flip); 1 for an honest worker
 * (null).
 */
export function attackMultiplier(attack: WorkerAttack | null): number {
  if (attack === null) return 1;
  return attack.kind === 'scale' ? attack.factor : -attack.factor;
}
