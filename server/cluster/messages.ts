/**
 * Every message between the processes of a cluster (docs/scaling.md,
 * "Messages"), in one place: the calls a follower makes to the leader (each
 * method's arguments and result), and the union of the bus's headers, which
 * the receivers switch on by `t`. Binary parts (model layers, gradients,
 * partial sums) travel beside a header as its blobs (server/cluster/bus.ts).
 */
import type { EstimateStats } from '../../core/aggregation';
import type {
  DashboardSnapshot,
  EncodedLayer,
  JoinAccepted,
  JoinRequest,
  LayerStats,
  ModelVersion,
  ProtocolErrorCode,
  RoundOpen,
  RunConfig,
  RunId,
  RunSummary,
  WorkerAssignment,
  WorkerId,
  WorkerTimes,
} from '../../core/protocol';
import type { WorkerAttack } from '../../core/schema';
import type { Direction, FrameCategory } from '../../core/traffic/frames';
import type { AdminEvent } from '../sockets/admin';
import type { ApiSource } from '../http/api';
import type { AckResult } from '../sockets/io';

// ── Calls: what a follower's sockets and /api ask the leader ─────────────────

/** Each call's arguments and result: the socket backend's methods (server/sockets/sockets.ts) and the /api source's. */
export interface CallMap {
  join: {
    args: { request: JoinRequest; socketId: string; address: string; previous: WorkerId | null };
    result: { workerId: WorkerId; accepted: JoinAccepted };
  };
  disconnect: { args: { workerId: WorkerId; socketId: string }; result: null };
  reconnect: { args: { workerId: WorkerId; socketId: string }; result: null };
  /** Every socket a process holds, to a new leader (or after its heartbeat had lapsed). */
  hello: { args: { sockets: readonly (readonly [string, WorkerId])[] }; result: null };
  /** The frames of a process's workers' sockets since the last report, summed. */
  traffic: { args: { frames: readonly TrafficFrame[] }; result: null };
  requestModel: { args: { workerId: WorkerId; socketId: string; runId: RunId }; result: null };
  subscribe: { args: { runId: RunId | undefined }; result: DashboardSnapshot };
  admin: { args: { event: AdminEvent; payload: unknown }; result: AckResult<AdminEvent> };
  runCount: { args: Record<string, never>; result: number };
  summaries: { args: Record<string, never>; result: RunSummary[] };
  history: { args: { runId: RunId }; result: Awaited<ReturnType<ApiSource['history']>> };
}

export type CallMethod = keyof CallMap;
export type CallArgs<M extends CallMethod> = CallMap[M]['args'];
export type CallResult<M extends CallMethod> = CallMap[M]['result'];

/** [worker, direction, category, bytes]. */
export type TrafficFrame = readonly [WorkerId, Direction, FrameCategory, number];

/** A call's method with its arguments. */
export type RpcCall = { [M in CallMethod]: { readonly method: M; readonly args: CallArgs<M> } }[CallMethod];

/** Pairs a method with its arguments. */
export function rpcCall<M extends CallMethod>(method: M, args: CallArgs<M>): RpcCall {
  return { method, args } as RpcCall;
}

/** A call; `id` is empty when nobody waits for the answer. */
export type RpcHeader = { readonly t: 'rpc'; readonly id: string } & RpcCall;

/** The answer to a call. */
export interface ReplyHeader {
  readonly t: 'reply';
  readonly id: string;
  readonly ok: boolean;
  readonly value?: unknown;
  readonly fault?: { code: ProtocolErrorCode; message: string; detail?: string };
  /** The addressee does not lead (any more): ask the leader again. */
  readonly retry?: boolean;
}

// ── A round, from the leader to every process ───────────────────────────────

/**
 * One round:open of a round without its binary parts, and the sockets it goes to. The parts travel as the message's
 * blobs, delivery after delivery, each as its `layers`, then its velocity, then its relayed messages.
 */
export interface DeliveryHeader {
  readonly round: Omit<RoundOpen, 'layers' | 'velocity' | 'relayed'>;
  readonly layers: number;
  readonly velocity: boolean;
  readonly relayed: boolean;
  /** [socket, the process holding it] of each recipient. */
  readonly to: readonly (readonly [string, string])[];
}

/**
 * What the leader sends when a round opens: under the `full` downlink one delivery for everyone; under `auto`, `atomo`
 * and `relay` the update for the replicas in step and a sync or the model for the others (docs/protocol.md,
 * "Downlink").
 */
export interface OpenHeader {
  readonly t: 'open';
  readonly term: number;
  readonly runId: RunId;
  readonly version: ModelVersion;
  readonly config: RunConfig;
  readonly deliveries: readonly DeliveryHeader[];
  /** [worker, its socket, the process holding it]. */
  readonly participants: readonly (readonly [WorkerId, string, string])[];
  readonly attacks: readonly (readonly [WorkerId, WorkerAttack])[];
}

/** A sync of the open round to a worker whose replica failed its hash check (model:request). */
export interface ResyncHeader {
  readonly t: 'resync';
  readonly term: number;
  readonly runId: RunId;
  readonly version: ModelVersion;
  readonly deliveries: readonly DeliveryHeader[];
}

/** The leader closes a round (`seal`: accept no more gradients) or has closed it (`done`: forget it). */
export interface RoundStepHeader {
  readonly t: 'seal' | 'done';
  readonly term: number;
  readonly runId: RunId;
  readonly version: ModelVersion;
}

/** The leader's plan for a sealed round: which held estimates, with which weights and scales. */
export interface PlanHeader {
  readonly t: 'plan';
  readonly term: number;
  readonly runId: RunId;
  readonly version: ModelVersion;
  /** Bumped when a process died and the plan was made again without its gradients. */
  readonly seq: number;
  readonly kind: 'sum' | 'estimates';
  /** [worker, weight]; the weight is 1 for 'estimates'. */
  readonly workers: readonly (readonly [WorkerId, number])[];
  readonly scales: readonly number[];
}

// ── A round, from a process to the leader ───────────────────────────────────

/**
 * A contribution's report to the leader; under the `relay` and `auto` downlinks the gradient's layers as received are
 * its blobs.
 */
export interface ContribHeader {
  readonly t: 'contrib';
  readonly term: number;
  readonly runId: RunId;
  readonly version: ModelVersion;
  readonly workerId: WorkerId;
  readonly loss: number;
  readonly layerStats: readonly LayerStats[];
  readonly bytesUp: number;
  readonly computeMs: number;
  readonly times?: WorkerTimes;
  readonly stats: EstimateStats;
  /** When this process accepted it, and how long its decoding took (ms). */
  readonly at: number;
  readonly decodeMs: number;
  /** What the estimate was multiplied by (the classroom attack); the relay forwards it. */
  readonly multiplier: number;
}

/** A process accepts no more gradients of the round (sent after its last report, on the same stream). */
export interface SealedHeader {
  readonly t: 'sealed';
  readonly term: number;
  readonly runId: RunId;
  readonly version: ModelVersion;
}

/** A process's answer to a plan: its partial sum (one blob) or its estimates (one blob each, in `workers` order). */
export interface PartialHeader {
  readonly t: 'partial';
  readonly term: number;
  readonly runId: RunId;
  readonly version: ModelVersion;
  readonly seq: number;
  readonly workers: readonly WorkerId[];
}

// ── Everything else ─────────────────────────────────────────────────────────

/** A leader is ready (it loaded the state): every process says who is connected where. */
export interface LeaderHeader {
  readonly t: 'leader';
  readonly term: number;
}

/** What the registry tells a worker's socket (server/run/runs.ts WorkerNotifier). */
export type NotifyBody =
  | { readonly kind: 'assigned'; readonly assignment: WorkerAssignment }
  | { readonly kind: 'removed'; readonly reason: string };

/** The registry's notice to a worker's socket on another process. */
export type NotifyHeader = {
  readonly t: 'notify';
  readonly term: number;
  readonly socketId: string;
  readonly workerId: WorkerId;
} & NotifyBody;

/** What the leader's state handles: a process's side of a round. */
export type ToLeaderHeader = ContribHeader | SealedHeader | PartialHeader;

/** Every header on the bus. */
export type ClusterHeader =
  | RpcHeader
  | ReplyHeader
  | ToLeaderHeader
  | LeaderHeader
  | OpenHeader
  | ResyncHeader
  | RoundStepHeader
  | PlanHeader
  | NotifyHeader;

// ── Deliveries as headers and blobs ─────────────────────────────────────────

/** A binary part as a Buffer over the same bytes. */
export function toBuffer(part: EncodedLayer): Buffer {
  return part instanceof Uint8Array ? Buffer.from(part.buffer, part.byteOffset, part.byteLength) : Buffer.from(part);
}

/** Round:open messages as delivery headers and blobs; `to` gives each worker's [socket, process], or none. */
export function packDeliveries(
  deliveries: readonly { readonly workers: readonly WorkerId[]; readonly message: RoundOpen }[],
  to: (workerId: WorkerId) => readonly [string, string] | undefined,
): { headers: DeliveryHeader[]; blobs: Buffer[] } {
  const blobs: Buffer[] = [];
  const headers = deliveries.map(({ workers, message }): DeliveryHeader => {
    const { layers, velocity, relayed, ...round } = message;
    for (const layer of layers) blobs.push(toBuffer(layer));
    if (velocity !== undefined) blobs.push(toBuffer(velocity));
    if (relayed !== undefined) blobs.push(toBuffer(relayed));
    return {
      round,
      layers: layers.length,
      velocity: velocity !== undefined,
      relayed: relayed !== undefined,
      to: workers.flatMap((w) => {
        const address = to(w);
        return address === undefined ? [] : [address];
      }),
    };
  });
  return { headers, blobs };
}

/** The round:open messages of delivery headers and their blobs, each with the sockets of `self` it goes to. */
export function unpackDeliveries(
  headers: readonly DeliveryHeader[],
  blobs: readonly Buffer[],
  self: string,
): { round: RoundOpen; sockets: string[] }[] {
  let next = 0;
  return headers.map((header) => {
    const layers = blobs.slice(next, next + header.layers);
    next += header.layers;
    const velocity = header.velocity ? blobs[next++] : undefined;
    const relayed = header.relayed ? blobs[next++] : undefined;
    const round: RoundOpen = {
      ...header.round,
      layers,
      ...(velocity === undefined ? {} : { velocity }),
      ...(relayed === undefined ? {} : { relayed }),
    };
    return { round, sockets: header.to.filter(([, process]) => process === self).map(([socket]) => socket) };
  });
}
