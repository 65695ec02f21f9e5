/**
 * The wire contract between the aggregator and its clients (worker tabs,
 * dashboards, headless swarms), documented event by event in
 * docs/protocol.md. The server is `Server<ClientToServerEvents,
 * ServerToClientEvents>`, a client `Socket<ServerToClientEvents,
 * ClientToServerEvents>`; this file names no socket.io type, so core/ stays
 * free of platform modules.
 *
 * Binary data (model weights, gradients) travels as socket.io binary
 * attachments: one encoded layer (core/codec) per Uint8Array, never a JSON
 * array of numbers. A browser receives them as ArrayBuffer, Node as Buffer
 * (a Uint8Array); `asBytes` reads either.
 */
import type { Decomposition } from './atomo/types';
import type { WireTraffic } from './traffic/frames';

export type { WireTraffic } from './traffic/frames';

/** Bumped on any incompatible change of an event or payload below. */
export const PROTOCOL_VERSION = 1;

declare const brand: unique symbol;
type Brand<T, B extends string> = T & { readonly [brand]: B };

/** A worker's public id, unique on one server and stable across reconnects and restarts (u32). */
export type WorkerId = Brand<number, 'WorkerId'>;
/** The secret a tab keeps (localStorage) to rejoin as the same worker; never shown to others. */
export type WorkerKey = Brand<string, 'WorkerKey'>;
/** A run's id: short, URL-safe, unique on one server. */
export type RunId = Brand<string, 'RunId'>;
/** A model version: the number of SGD updates applied to the run's weights. Round v trains version v. */
export type ModelVersion = Brand<number, 'ModelVersion'>;
/** One layer as core/codec encodes it (12-byte header + body), as sent or received. */
export type EncodedLayer = Uint8Array | ArrayBuffer;

/** Brands a number as a WorkerId (no check: validation happens where ids enter). */
export const asWorkerId = (id: number): WorkerId => id as WorkerId;
/** Brands a string as a RunId. */
export const asRunId = (id: string): RunId => id as RunId;
/** Brands a number as a ModelVersion. */
export const asModelVersion = (version: number): ModelVersion => version as ModelVersion;
/** Brands a string as a WorkerKey. */
export const asWorkerKey = (key: string): WorkerKey => key as WorkerKey;

/** A binary attachment as bytes, whichever form the platform delivered (ArrayBuffer in a tab, Buffer in Node). */
export function asBytes(data: EncodedLayer): Uint8Array {
  return data instanceof Uint8Array ? data : new Uint8Array(data);
}

// ── Runs ──────────────────────────────────

// The run configuration's types are derived from its schema, the one home of its defaults and bounds.
export type {
  AggregationRule,
  DataSplit,
  DownlinkMode,
  QuorumRule,
  RunConfig,
  RunConfigPatch,
} from './schema/runConfig';
export type { WorkerAttack } from './schema/attack';
import type { WorkerAttack } from './schema/attack';
import type { AggregationRule, DownlinkMode, RunConfig, RunConfigPatch } from './schema/runConfig';

/**
 * created: waits for start; running: rounds open as workers come; paused: no round opens; finished: maxRounds reached.
 */
export type RunStatus = 'created' | 'running' | 'paused' | 'finished';

/** Where a worker computes, as it says at worker:join (shown to the teacher, never trusted for anything else). */
export interface WorkerBackend {
  readonly kind: 'webgpu' | 'cpu';
  /** The GPU adapter's description, or why the worker fell back to the CPU (at most 80 characters). */
  readonly detail?: string;
  /** A tab with WebGPU times a few rounds on each backend and trains on the faster: the median round of each, ms. */
  readonly calibration?: BackendTimes;
}

/** Median wall time of one round (compute, compression, encoding) on each backend of a worker, ms. */
export interface BackendTimes {
  readonly webgpuMs: number;
  readonly cpuMs: number;
}

/** A worker as dashboards see it. */
export interface WorkerSummary {
  readonly workerId: WorkerId;
  /** The name the worker joined with (sanitised), or "worker <id>". */
  readonly name: string;
  /** Its backend as it reported at join; null when it did not say (older clients, headless tools). */
  readonly backend: WorkerBackend | null;
  readonly slot: number;
  readonly connected: boolean;
  readonly bytesUp: number;
  readonly bytesDown: number;
  /** Every frame of its socket while it was in this run, both ways, as on the wire (core/traffic). */
  readonly traffic: WireTraffic;
  readonly rounds: number;
  /**
   * Server clock (ms since epoch) of its last join or accepted gradient; null before either since the server started.
   */
  readonly lastSeenAt: number | null;
  /**
   * Server-measured round trip of its last accepted gradient: from round:open
   * being sent to the gradient's arrival (download, compute, compress,
   * upload); null until one arrived since the server started.
   */
  readonly latencyMs: number | null;
  /** The classroom attack the teacher set on this worker (the server applies it to its estimates), or null. */
  readonly attack: WorkerAttack | null;
  /** A worker the server simulates itself (started from the dashboard with worker:simulate), not a tab. */
  readonly simulated: boolean;
}

/** The round in progress, as dashboards see it. */
export interface RoundSummary {
  readonly version: ModelVersion;
  readonly openedAt: number;
  readonly deadline: number;
  readonly participants: readonly WorkerId[];
  readonly received: readonly WorkerId[];
}

/** A run's state, pushed to dashboards on every change. */
export interface RunSummary {
  readonly runId: RunId;
  readonly config: RunConfig;
  readonly status: RunStatus;
  readonly version: ModelVersion;
  readonly workers: readonly WorkerSummary[];
  readonly round: RoundSummary | null;
  /** Encoded gradient and model payloads (core/codec), without envelope or framing. */
  readonly bytesUp: number;
  readonly bytesDown: number;
  /** Every frame of its workers' sockets, both ways, as on the wire (core/traffic). */
  readonly traffic: WireTraffic;
  /**
   * Why the server paused this run on its own (a failed update, a fault in a
   * scheduled step), for the dashboard; null when nothing went wrong since
   * the last start, resume or reset.
   */
  readonly fault: string | null;
}

// ── Metrics ─────────────────────────────────

/**
 * How the layers of a round were sent: a decomposition (core/atomo/types.ts), dense float32, or neither (QSGD,
 * TernGrad, PowerSGD).
 */
export type LayerSentAs = Decomposition | 'dense';

/** Estimator variance of one layer in one round, mean over the contributing workers, and how the layer travelled. */
export interface LayerVariance {
  /** Closed form E‖ĝ − g‖² = Σ λᵢ²(1/pᵢ − 1). */
  readonly closedForm: number;
  /** Realised ‖ĝ − g‖², computed on the worker, which knows g. */
  readonly realised: number;
  /** ‖g‖², the denominator of the relative variances. */
  readonly gradientNormSq: number;
  /**
   * Mean of the indicator ‖G‖_*·√(m+n)/‖g‖₁ over the workers that measured
   * it this round (LayerStats.indicator), null when none did. Absent in
   * rounds recorded before it existed.
   */
  readonly indicator?: number | null;
  /** Mean encoded bytes of this layer per contributing worker, as received (absent in older records). */
  readonly bytes?: number;
  /** How many contributors sent this layer in each decomposition, or dense (ATOMO runs; absent in older records). */
  readonly sentAs?: Partial<Record<LayerSentAs, number>>;
}

/** Which clock measured a worker's times: its own thread's CPU time, or the wall clock. */
export const TIME_SOURCES = ['thread-cpu', 'wall'] as const;
export type TimeSource = (typeof TIME_SOURCES)[number];

/**
 * How a worker's reported round time splits, and which clock measured it (docs/protocol.md, "Worker times"):
 * `compressMs`, `encodeMs` and `applyMs` are parts of its `computeMs`.
 */
export interface WorkerTimes {
  readonly compressMs: number;
  readonly encodeMs: number;
  /** The replica's update to the version it trains (a compressed downlink's decoding); absent when not reported. */
  readonly applyMs?: number;
  readonly clock: TimeSource;
}

/** One worker's part of a round. */
export interface WorkerRoundMetrics {
  readonly workerId: WorkerId;
  readonly loss: number;
  /** Exact bytes of the binary payload received from it this round. */
  readonly bytesUp: number;
  /** Exact bytes of the model sent to it this round. */
  readonly bytesDown: number;
  /** Its own report of the time it spent on the round: model update, forward/backward, compression, encoding. */
  readonly computeMs: number;
  /** Its split of computeMs and the clock that measured it; absent when it sent none (computeMs on the wall clock). */
  readonly times?: WorkerTimes;
}

/** Where a round's time went, in milliseconds. */
export interface RoundDurations {
  /** round:open to close. */
  readonly totalMs: number;
  /** round:open to the last accepted gradient. */
  readonly collectMs: number;
  /** Validating, decoding and reconstructing the gradients (summed). */
  readonly decodeMs: number;
  /** Averaging the estimates and the SGD step. */
  readonly updateMs: number;
  /** Test-set evaluation (0 when not evaluated this round). */
  readonly evalMs: number;
  /**
   * updateMs split: combining the estimates by the run's rule (in a cluster, until the partial sums are in), and the
   * SGD step with the `atomo` downlink's compression of the update; absent in histories recorded before.
   */
  readonly combineMs?: number;
  readonly stepMs?: number;
  /** When the round opened: building its round:open messages (weights, relay, sync, hash), and emitting them. */
  readonly downlinkMs?: number;
  readonly emitMs?: number;
}

/** Per layer, what the `atomo` downlink's compression of the update costs (docs/protocol.md, "Downlink"). */
export interface DownlinkLayerVariance {
  /** Closed form E‖û − u‖² of the server's spectral ATOMO sample of the update u. */
  readonly closedForm: number;
  /** Realised ‖û − u‖². */
  readonly realised: number;
  /** ‖u‖², the denominator of the relative variance. */
  readonly updateNormSq: number;
}

/**
 * What the `auto` downlink weighed when it opened a round (docs/protocol.md, "Downlink"): the relay update against the
 * dense model, payload bytes.
 */
export interface DownlinkChoice {
  /** The relayed messages that take a replica to this version, in bytes; null when none can (nothing to relay). */
  readonly relayBytes: number | null;
  /** How many contributions they are. */
  readonly messages: number;
  /** The dense float32 model. */
  readonly modelBytes: number;
}

/** How the model travelled to a round's participants. */
export interface DownlinkMetrics {
  readonly mode: DownlinkMode;
  /** Participants sent the dense model (`full`), the model and momentum (`sync`), or the update (`relay`/`atomo`). */
  readonly full: number;
  readonly sync: number;
  readonly update: number;
  /** Replicas that failed their hash check this round and asked for a sync. */
  readonly resyncs: number;
  /**
   * `atomo`: the compression of this round's update (that brings the model to version + 1), per layer; empty otherwise.
   */
  readonly layers: readonly DownlinkLayerVariance[];
  /** `auto`, `relay`, `atomo`: modelHash of the weights and momentum of version + 1, which the replicas must reach. */
  readonly hash?: string;
  /** `auto`: the bytes behind this round's deliveries. */
  readonly choice?: DownlinkChoice;
}

/** How a round's estimates were combined, and what the rule did to them (core/aggregation, Aggregate). */
export interface RoundAggregation {
  /** The run's rule that round. */
  readonly rule: AggregationRule;
  /** Contributions the norm bound scaled down (0 under the other rules). */
  readonly clipped: number;
  /**
   * Values per coordinate left out of the average: n − 1 (odd n) or n − 2 (even n) under the median, 2·⌊trim·n⌋
   * under the trimmed mean, 0 under the mean and the norm bound.
   */
  readonly dropped: number;
}

/** The record of one closed round: model `version` trained into `version + 1`. */
export interface RoundMetrics {
  readonly runId: RunId;
  readonly version: ModelVersion;
  readonly closedAt: number;
  readonly participants: number;
  readonly contributors: number;
  /** Each contributor's part in the round, by worker id. */
  readonly workers: readonly WorkerRoundMetrics[];
  /** Mean of the contributors' minibatch losses. */
  readonly trainLoss: number;
  /** Held-out loss and accuracy of model version + 1, on evaluation rounds only. */
  readonly testLoss: number | null;
  readonly testAccuracy: number | null;
  readonly bytesUp: number;
  readonly bytesDown: number;
  readonly cumulativeBytesUp: number;
  readonly cumulativeBytesDown: number;
  /**
   * Frames of the run's workers since the previous round closed (this round's model, gradients, and control), as on the
   * wire.
   */
  readonly traffic: WireTraffic;
  /** Frames of the run's workers since it started (or was reset). */
  readonly cumulativeTraffic: WireTraffic;
  readonly layers: readonly LayerVariance[];
  readonly durations: RoundDurations;
  /** How the model travelled this round; absent in histories recorded before the compressed downlinks. */
  readonly downlink?: DownlinkMetrics;
  /** The rule that combined the estimates and its counts; absent in histories recorded before they were kept. */
  readonly aggregation?: RoundAggregation;
}

// ── Messages ─────────────────────────────────

/** Why a message was refused. Stable; docs/protocol.md explains each. */
export type ProtocolErrorCode =
  | 'bad-message' // payload not of the expected schema (garbage, wrong types)
  | 'bad-protocol' // client speaks another PROTOCOL_VERSION
  | 'unknown-run'
  | 'unknown-worker' // worker key or id not known
  | 'not-your-worker' // worker id not owned by this socket
  | 'not-joined' // gradient before worker:join
  | 'wrong-run' // worker is a member of another run
  | 'stale-version' // gradient for an old version (round closed)
  | 'future-version' // gradient for a version not opened yet
  | 'not-participant' // joined mid-round: waits for the next one
  | 'duplicate' // second gradient for the same round
  | 'round-closed' // no round is open (run paused, finished or idle)
  | 'layer-count' // wrong number of layers
  | 'payload-too-large' // a layer above the largest size its scheme can produce
  | 'codec' // the codec refused a layer (truncated, NaN, wrong shape, ...): see detail
  | 'wrong-scheme' // a layer encoded with another scheme than the run's
  | 'bad-stats' // loss or variance figures missing or not finite
  | 'rate-limited'
  | 'too-many-workers' // a keyless join beyond the server's bound on identities (per address or in total)
  | 'forbidden' // teacher action without the admin token
  | 'invalid-config'
  | 'invalid-state' // e.g. start a running run
  | 'internal'; // a server bug; the message was dropped, the server goes on

/** A refusal: machine code, human message, and the event that caused it. */
export interface ProtocolError {
  readonly code: ProtocolErrorCode;
  readonly message: string;
  readonly event: string;
  /** For code 'codec': the CodecError code (truncated, non-finite, shape-mismatch, ...). */
  readonly detail?: string;
}

/** The answer to a request: ok with its result, or an error. */
export type Ack<T extends object = object> =
  ({ readonly ok: true } & T) | { readonly ok: false; readonly error: ProtocolError };

/** worker:join. Without workerKey a new worker is created; with it the tab rejoins as itself. */
export interface JoinRequest {
  readonly protocol: number;
  readonly runId?: RunId;
  readonly workerKey?: WorkerKey;
  /** Shown to the teacher; control characters are removed and it is cut to 40 characters. */
  readonly name?: string;
  /** Where this worker computes, for the teacher's workers table. */
  readonly backend?: WorkerBackend;
}

/** What a worker needs to train: who it is, its run, its shard. */
export interface WorkerAssignment {
  readonly workerId: WorkerId;
  readonly runId: RunId;
  readonly config: RunConfig;
  /** The worker's slot in the run: its shard is slot mod config.shards, and its randomness stream id. */
  readonly slot: number;
  readonly shard: number;
  /** Largest message the server accepts (maxHttpBufferSize); check before sending. */
  readonly maxMessageBytes: number;
}

/** The answer to worker:join: the assignment plus the key to store for rejoining. */
export interface JoinAccepted extends WorkerAssignment {
  readonly workerKey: WorkerKey;
}

/** Per-layer statistics a worker reports with its gradient (for the metrics only). */
export interface LayerStats {
  readonly closedForm: number;
  readonly realised: number;
  readonly gradientNormSq: number;
  /**
   * ‖G‖_*·√(rows + cols)/‖g‖₁ of this layer's gradient (docs/design.md,
   * "Which atoms suit a layer"), when the worker measured it this round
   * (every round where its compression took an SVD, else every
   * INDICATOR_EVERY rounds); the server refuses one outside the range any
   * gradient's lies in.
   */
  readonly indicator?: number;
}

/** gradient:submit: one encoded layer per model layer, in layout order, for model `version`. */
export interface GradientSubmission {
  readonly runId: RunId;
  readonly workerId: WorkerId;
  readonly version: ModelVersion;
  readonly layers: readonly EncodedLayer[];
  readonly loss: number;
  readonly layerStats: readonly LayerStats[];
  /** The worker's own time on the round (replica update, forward/backward, compression, encoding), ms. */
  readonly computeMs: number;
  /** Optional: the compression and encoding parts of computeMs and the clock that measured them. */
  readonly times?: WorkerTimes;
}

/** The answer to an accepted gradient. */
export interface GradientReceipt {
  readonly version: ModelVersion;
  readonly bytes: number;
}

/**
 * How a round:open brings model `version` to a worker (docs/protocol.md, "Downlink"):
 *   full   the dense float32 weights;
 *   sync   the dense weights and momentum (a replica starts or restarts from them);
 *   relay  the accepted gradient messages of round version − 1, to apply to the replica;
 *   atomo  the server's ATOMO-compressed update of round version − 1, to apply to the replica.
 */
export type ModelDelivery = 'full' | 'sync' | 'relay' | 'atomo';

/** round:open: model `version` to train on before `deadline`, delivered as `delivery` says. */
export interface RoundOpen {
  readonly runId: RunId;
  readonly version: ModelVersion;
  /** Server clock (ms since epoch) after which the round may close without you. */
  readonly deadline: number;
  readonly delivery: ModelDelivery;
  /**
   * full, sync: one dense float32 layer per model layer (the weights);
   * atomo: one encoded layer per model layer (the update); relay: none (see `relayed`).
   */
  readonly layers: readonly EncodedLayer[];
  /** sync: the momentum, as one dense float32 layer of shape 1 × parameters. */
  readonly velocity?: EncodedLayer;
  /**
   * relay: every contribution's encoded layers back to back, in ascending
   * worker id, one binary attachment (socket.io refuses a packet of more than
   * 10 attachments), cut by `relayedLengths` (contributions × layers byte lengths).
   */
  readonly relayed?: EncodedLayer;
  readonly relayedLengths?: readonly number[];
  /** relay: what each contribution's estimate is multiplied by (1, or the classroom attack's ±factor). */
  readonly multipliers?: readonly number[];
  /** sync, relay, atomo: modelHash (core/training/modelUpdate.ts) of the weights and momentum of `version`. */
  readonly hash?: string;
}

/** The binary payload of a round:open (weights, momentum, update or relayed messages), in bytes. */
export function roundOpenBytes(round: RoundOpen): number {
  let bytes = 0;
  for (const layer of round.layers) bytes += asBytes(layer).byteLength;
  if (round.velocity !== undefined) bytes += asBytes(round.velocity).byteLength;
  if (round.relayed !== undefined) bytes += asBytes(round.relayed).byteLength;
  return bytes;
}

/** model:request: this worker's replica failed its hash check; send it a sync. */
export interface ModelRequest {
  readonly runId: RunId;
}

/** round:closed, to the run's workers: the round is over, whether your gradient counted. */
export interface RoundClosed {
  readonly runId: RunId;
  readonly version: ModelVersion;
  readonly contributors: readonly WorkerId[];
}

/** dashboard:subscribe: every run's summary, and the history of `runId` (or of every run). */
export interface SubscribeRequest {
  readonly runId?: RunId;
}

/** The snapshot a dashboard starts from; live changes follow as run:state and metrics:round. */
export interface DashboardSnapshot {
  readonly runs: readonly RunSummary[];
  readonly history: Readonly<Record<string, readonly RoundMetrics[]>>;
}

/** run:configure */
export interface ConfigureRequest {
  readonly runId: RunId;
  readonly config: RunConfigPatch;
}

/** run:start, run:pause, run:resume, run:reset, run:delete */
export interface RunRequest {
  readonly runId: RunId;
}

/** worker:move */
export interface MoveWorkerRequest {
  readonly workerId: WorkerId;
  readonly runId: RunId;
}

/** worker:remove */
export interface RemoveWorkerRequest {
  readonly workerId: WorkerId;
}

/** worker:attack: the classroom's simulated attacker (null makes the worker honest again). */
export interface AttackWorkerRequest {
  readonly workerId: WorkerId;
  readonly attack: WorkerAttack | null;
}

/** worker:simulate: the server starts a simulated worker in this run. */
export interface SimulateWorkerRequest {
  readonly runId: RunId;
}

/** Events a client sends. Every one that takes an ack answers exactly once. */
export interface ClientToServerEvents {
  'worker:join': (request: JoinRequest, ack: (response: Ack<JoinAccepted>) => void) => void;
  'worker:leave': (ack?: (response: Ack) => void) => void;
  'gradient:submit': (submission: GradientSubmission, ack?: (response: Ack<GradientReceipt>) => void) => void;
  'model:request': (request: ModelRequest, ack?: (response: Ack) => void) => void;
  'dashboard:subscribe': (request: SubscribeRequest, ack: (response: Ack<DashboardSnapshot>) => void) => void;
  'run:create': (request: RunConfigPatch, ack: (response: Ack<{ readonly run: RunSummary }>) => void) => void;
  'run:configure': (request: ConfigureRequest, ack: (response: Ack<{ readonly run: RunSummary }>) => void) => void;
  'run:start': (request: RunRequest, ack: (response: Ack<{ readonly run: RunSummary }>) => void) => void;
  'run:pause': (request: RunRequest, ack: (response: Ack<{ readonly run: RunSummary }>) => void) => void;
  'run:resume': (request: RunRequest, ack: (response: Ack<{ readonly run: RunSummary }>) => void) => void;
  'run:reset': (request: RunRequest, ack: (response: Ack<{ readonly run: RunSummary }>) => void) => void;
  'run:delete': (request: RunRequest, ack: (response: Ack) => void) => void;
  'worker:move': (request: MoveWorkerRequest, ack: (response: Ack) => void) => void;
  'worker:remove': (request: RemoveWorkerRequest, ack: (response: Ack) => void) => void;
  'worker:attack': (request: AttackWorkerRequest, ack: (response: Ack) => void) => void;
  'worker:simulate': (
    request: SimulateWorkerRequest,
    ack: (response: Ack<{ readonly workerId: WorkerId }>) => void,
  ) => void;
}

/** Events the server sends. */
export interface ServerToClientEvents {
  'round:open': (round: RoundOpen) => void;
  'round:closed': (closed: RoundClosed) => void;
  'metrics:round': (metrics: RoundMetrics) => void;
  'run:state': (run: RunSummary) => void;
  'run:deleted': (request: RunRequest) => void;
  /** The teacher moved this worker (or its run was reset): train by the new assignment. */
  'worker:assigned': (assignment: WorkerAssignment) => void;
  /** The teacher removed this worker; its key no longer joins. */
  'worker:removed': (notice: { readonly workerId: WorkerId; readonly reason: string }) => void;
  /** A message of this socket was refused (also sent when the message had an ack). */
  'server:error': (error: ProtocolError) => void;
}

/** What a socket authenticates with in the handshake (`io(url, { auth })`). Admin only with the right token. */
export interface HandshakeAuth {
  readonly adminToken?: string;
}

/** Socket event names that only a socket with the admin token may emit. */
export const ADMIN_EVENTS = [
  'run:create',
  'run:configure',
  'run:start',
  'run:pause',
  'run:resume',
  'run:reset',
  'run:delete',
  'worker:move',
  'worker:remove',
  'worker:attack',
  'worker:simulate',
] as const satisfies readonly (keyof ClientToServerEvents)[];

/** Room of a run's workers and dashboards (server side naming, documented for tools). */
export const runRoom = (runId: RunId): string => `run:${runId}`;

/** One address of this machine on a network. */
export interface LanAddress {
  readonly address: string;
  /** The interface's name (en0, wlan0, Ethernet): helps the teacher pick the classroom network. */
  readonly interface: string;
}

/** What GET /api/join answers (the dashboard's join card): the URLs a student's device can open. */
export interface JoinInfo {
  readonly scheme: 'http' | 'https';
  readonly port: number;
  readonly hostname: string;
  /** LAN addresses first; empty when the machine is on no network. */
  readonly addresses: readonly LanAddress[];
  /** One worker-page URL per address, in the same order; `http(s)://localhost:<port>/` when there is none. */
  readonly urls: readonly string[];
}
