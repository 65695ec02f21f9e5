/**
 * Limits of the aggregator. Message sizes are derived from the models rather than picked:
 * socket.io's maxHttpBufferSize must admit the largest honest gradient
 * (core/codec/sizes.ts's maxLayerBytes, which validation also uses to refuse a
 * layer larger than its scheme can ever produce before decoding).
 */
import { isIPv4, isIPv6 } from 'node:net';
import { MAX_LEVELS, SCHEME_NAMES } from '../../core/atomo';
import { QSGD_CODINGS, type QsgdCoding } from '../../core/atomo/types';
import { maxLayerBytes } from '../../core/codec';
import { RUN_CONFIG_BOUNDS } from '../../core/schema';
import { MODEL_KINDS, createModelLayout } from '../../core/model/layout';

/** Room for the JSON part of a submission (ids, loss, per-layer statistics) and socket.io framing. */
const ENVELOPE_BYTES = 64 * 1024;

/**
 * The maxHttpBufferSize of the socket.io server: the largest submission any
 * model and scheme can honestly produce, plus the JSON envelope, rounded up to
 * a MiB. Beyond it socket.io drops the connection with a bare transport
 * error, so clients check their payload against it before sending.
 */
export function computeMaxMessageBytes(): number {
  let largest = 0;
  for (const kind of MODEL_KINDS) {
    const layout = createModelLayout(kind);
    for (const scheme of SCHEME_NAMES) {
      let total = 0;
      for (const tensor of layout.tensors) {
        const bound = (coding: QsgdCoding) =>
          maxLayerBytes(scheme, tensor.shape, MAX_LEVELS, RUN_CONFIG_BOUNDS.bucketSize.minNonZero, coding);
        total += Math.max(...QSGD_CODINGS.map(bound));
      }
      largest = Math.max(largest, total);
    }
  }
  const MiB = 1024 * 1024;
  return Math.ceil((largest + ENVELOPE_BYTES) / MiB) * MiB;
}

/** Token-bucket rate limit per socket: a steady rate and a burst. */
export interface RateLimit {
  readonly perSecond: number;
  readonly burst: number;
}

/**
 * 20 messages a second with bursts of 40: far below what would starve the
 * event loop, and above a classroom's honest traffic (a gradient per round,
 * a dashboard's few requests). Not above every honest worker's: a lone tab
 * on the MLP can finish 25-30 rounds a second. The server refuses what is
 * over the rate and the worker sends it again a token's time later
 * (client/net/socket.ts, resendWhileRateLimited), so such a tab trains at
 * this pace instead of losing its gradient and stalling its run.
 */
export const DEFAULT_RATE_LIMIT: RateLimit = { perSecond: 20, burst: 40 };

/**
 * Bounds on the worker identities that keyless joins create (docs/protocol.md,
 * "worker:join"): without them one script could create identities until the
 * server's memory and workers.json are full. Identities are counted per
 * address and in total; one unused (no socket) for `idleExpiryMs` is
 * forgotten, and its key joins no more.
 */
export interface IdentityLimits {
  /** Identities the server holds at most. */
  readonly maxTotal: number;
  /** Identities created from one address (IPv4, or IPv6 /64) held at most. */
  readonly maxPerAddress: number;
  /** An identity with no socket for this long (ms) is forgotten. */
  readonly idleExpiryMs: number;
}

/**
 * A class is a few dozen devices, each on its own LAN address; 64 per address
 * leaves room for a teacher's laptop running a demo swarm or a lab machine
 * shared by a few browsers, and 10,000 in all is far above any classroom
 * while keeping workers.json small. A day of disuse ends an identity: a
 * student who comes back the next lesson simply gets a new one. A swarm or
 * a benchmark with many workers on one machine raises maxPerAddress
 * (server/index.ts reads MAX_WORKERS, MAX_WORKERS_PER_ADDRESS, WORKER_IDLE_HOURS).
 */
export const DEFAULT_IDENTITY_LIMITS: IdentityLimits = {
  maxTotal: 10_000,
  maxPerAddress: 64,
  idleExpiryMs: 24 * 3_600_000,
};

/**
 * The key identities are counted under for a client address: an IPv4 address
 * (IPv4-mapped IPv6 unwrapped), or the /64 prefix of an IPv6 one, since a
 * single host may take any address of its /64 (privacy extensions).
 */
export function addressKey(address: string): string {
  const bare = address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address;
  if (!isIPv6(bare)) return bare;
  const [head = '', tail = ''] = bare.split('%')[0]!.split('::', 2) as [string, string?];
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  // A dotted IPv4 tail (::ffff:1.2.3.4 style) fills the last two groups; only the first four are kept anyway.
  const rightGroups = right.length + (right.at(-1)?.includes('.') ? 1 : 0);
  const groups = [...left, ...Array<string>(Math.max(0, 8 - left.length - rightGroups)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

/**
 * The identity limits set in the environment (MAX_WORKERS, MAX_WORKERS_PER_ADDRESS, WORKER_IDLE_HOURS); throws Error
 * naming a bad value.
 */
export function identityLimitsFromEnv(env: Readonly<Record<string, string | undefined>>): Partial<IdentityLimits> {
  const read = (name: string, integer: boolean): number | undefined => {
    const raw = env[name];
    if (raw === undefined || raw === '') return undefined;
    const value = Number(raw);
    if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
      throw new Error(
        `${name} must be a positive ${integer ? 'integer' : 'number'}, got ${JSON.stringify(raw.slice(0, 40))}`,
      );
    }
    return value;
  };
  const maxTotal = read('MAX_WORKERS', true);
  const maxPerAddress = read('MAX_WORKERS_PER_ADDRESS', true);
  const idleHours = read('WORKER_IDLE_HOURS', false);
  return {
    ...(maxTotal === undefined ? {} : { maxTotal }),
    ...(maxPerAddress === undefined ? {} : { maxPerAddress }),
    ...(idleHours === undefined ? {} : { idleExpiryMs: idleHours * 3_600_000 }),
  };
}
