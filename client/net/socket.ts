/**
 * The only place the project opens a socket.io client connection (the lint
 * enforces it; docs/design.md, "Layers"):
 * typed with core/protocol.ts, WebSocket transport only (docs/protocol.md,
 * Transport), and a request helper that always resolves, so no caller has to
 * handle a thrown timeout.
 */
import { io, type Socket } from 'socket.io-client';
import type {
  Ack,
  ClientToServerEvents,
  HandshakeAuth,
  ProtocolError,
  ServerToClientEvents,
} from '../../core/protocol';
import { FrameMeter, type EnginePacket } from '../../core/traffic/frames';

/** A client socket speaking the project's protocol. */
export type AppSocket = Socket<ServerToClientEvents, ClientToServerEvents>;

/** How long a request waits for its acknowledgement before it counts as lost. */
const REQUEST_TIMEOUT_MS = 10_000;

/** A refusal made on this side: the server did not answer, or the socket is down. */
export interface LocalFailure {
  readonly code: 'timeout' | 'disconnected';
  readonly message: string;
  readonly event: string;
}

/** What a request resolves to: the server's answer, or a local failure. */
export type RequestResult<T extends object> = Ack<T> | { readonly ok: false; readonly error: LocalFailure };

/** Any failure a request can end with, as the UI shows it. */
export type RequestError = ProtocolError | LocalFailure;

/** Options of `openSocket`. */
export interface OpenSocketOptions {
  /** The teacher's admin token; without it the socket is a student's. */
  readonly adminToken?: string;
  /** The server's origin; the page's own by default. */
  readonly url?: string;
  /** Connect at once (the default), or only when the caller calls `connect()` (a headless tab, listeners first). */
  readonly autoConnect?: boolean;
  /** The first reconnection's delay and the back-off's cap, ms (500 and 4000 by default). */
  readonly reconnectionDelayMs?: number;
  readonly reconnectionDelayMaxMs?: number;
}

/** Opens a socket to the aggregator, WebSocket only, reconnecting forever with a capped back-off. */
export function openSocket(options: OpenSocketOptions = {}): AppSocket {
  const auth: HandshakeAuth = options.adminToken === undefined ? {} : { adminToken: options.adminToken };
  const socketOptions = {
    transports: ['websocket'],
    auth: { ...auth },
    autoConnect: options.autoConnect ?? true,
    reconnection: true,
    reconnectionDelay: options.reconnectionDelayMs ?? 500,
    reconnectionDelayMax: options.reconnectionDelayMaxMs ?? 4_000,
  };
  const socket: AppSocket = options.url === undefined ? io(socketOptions) : io(options.url, socketOptions);
  const meter = new FrameMeter();
  meters.set(socket, meter);
  // Each (re)connection has a new engine: meter its packets both ways, as the server meters them.
  socket.io.on('open', () => {
    const engine = socket.io.engine;
    engine.on('packet', (packet: EnginePacket) => meter.record('down', packet));
    engine.on('packetCreate', (packet: EnginePacket) => meter.record('up', packet));
  });
  return socket;
}

const meters = new WeakMap<AppSocket, FrameMeter>();

/** Options of `connectSocket`. */
export interface ConnectSocketOptions {
  /** The teacher's admin token; without it the socket is a student's. */
  readonly adminToken?: string;
  /** Reconnect after a drop (off by default: a test or a tool wants to see the drop). */
  readonly reconnect?: boolean;
  /** Accept any TLS certificate (a test against an `--https` server's self-signed one); Node only. */
  readonly acceptAnyCertificate?: boolean;
}

/**
 * A socket to the aggregator at `url` from Node (server tests, the swarm, the
 * benchmarks, e2e set-up): resolves once connected, rejects with the first
 * connection error (and closes the socket).
 */
export function connectSocket(url: string, options: ConnectSocketOptions = {}): Promise<AppSocket> {
  const auth: HandshakeAuth = options.adminToken === undefined ? {} : { adminToken: options.adminToken };
  const socket: AppSocket = io(url, {
    transports: ['websocket'],
    auth: { ...auth },
    reconnection: options.reconnect ?? false,
    ...(options.acceptAnyCertificate === true ? { rejectUnauthorized: false } : {}),
  });
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket));
    socket.once('connect_error', (error) => {
      socket.disconnect();
      reject(error);
    });
  });
}

/** The frame meter of a socket opened by openSocket: this side's own count of every frame both ways. */
export function socketMeter(socket: AppSocket): FrameMeter | undefined {
  return meters.get(socket);
}

type AckEvents = {
  [K in keyof ClientToServerEvents]: Parameters<ClientToServerEvents[K]> extends [infer Request, infer Callback]
    ? NonNullable<Callback> extends (response: infer R) => void
      ? [Request, R]
      : never
    : Parameters<ClientToServerEvents[K]> extends [infer Request, (infer Callback)?]
      ? NonNullable<Callback> extends (response: infer R) => void
        ? [Request, R]
        : never
      : never;
};
type AckEventName = { [K in keyof AckEvents]: AckEvents[K] extends never ? never : K }[keyof AckEvents];
type RequestOf<E extends AckEventName> = AckEvents[E][0];
type ResponseOf<E extends AckEventName> = AckEvents[E][1];
type ResultOf<E extends AckEventName> = ResponseOf<E> | { readonly ok: false; readonly error: LocalFailure };

/**
 * How long a request the server refused for its rate waits before it is
 * sent again: the server refuses a message over its rate (server/protocol/limits.ts)
 * instead of queueing it, and one token of its default bucket (20 a second)
 * comes back in this time. Without the resend a lone fast worker's gradient,
 * once refused, never arrived: its round waited for it past the deadline
 * (no quorum) while the worker waited for the next round.
 */
export const RATE_LIMITED_RETRY_MS = 50;

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Calls `send` again, RATE_LIMITED_RETRY_MS apart, while it answers a rate-limited refusal, for at most `withinMs` in
 * all.
 */
export async function resendWhileRateLimited<
  R extends { readonly ok: boolean; readonly error?: { readonly code: string } },
>(send: () => Promise<R>, withinMs: number): Promise<R> {
  const giveUpAt = Date.now() + withinMs;
  for (;;) {
    const answer = await send();
    if (answer.ok || answer.error?.code !== 'rate-limited' || Date.now() + RATE_LIMITED_RETRY_MS > giveUpAt)
      return answer;
    await wait(RATE_LIMITED_RETRY_MS);
  }
}

/**
 * Sends a request event and resolves with its acknowledgement (sent again
 * while the server refuses it for its rate, resendWhileRateLimited);
 * resolves with a LocalFailure when the socket is down or no answer comes in
 * time.
 */
export function request<E extends AckEventName>(
  socket: AppSocket,
  event: E,
  payload: RequestOf<E>,
): Promise<ResultOf<E>> {
  return resendWhileRateLimited(() => requestOnce(socket, event, payload), REQUEST_TIMEOUT_MS);
}

function requestOnce<E extends AckEventName>(socket: AppSocket, event: E, payload: RequestOf<E>): Promise<ResultOf<E>> {
  // The cast bridges socket.io's variadic typing; the event's request and ack types are checked above.
  return answerOf(socket, event, (timed) =>
    (timed as unknown as { emitWithAck(name: E, body: RequestOf<E>): Promise<ResponseOf<E>> }).emitWithAck(
      event,
      payload,
    ),
  );
}

/** One emit with an ack, answered by the server or by a LocalFailure (the socket is down, or no answer in time). */
async function answerOf<R>(
  socket: AppSocket,
  event: string,
  emit: (timed: ReturnType<AppSocket['timeout']>) => Promise<R>,
): Promise<R | { readonly ok: false; readonly error: LocalFailure }> {
  if (!socket.connected) {
    return { ok: false, error: { code: 'disconnected', message: 'Not connected to the server.', event } };
  }
  try {
    return await emit(socket.timeout(REQUEST_TIMEOUT_MS));
  } catch {
    return { ok: false, error: { code: 'timeout', message: `The server did not answer ${event} in time.`, event } };
  }
}

/**
 * Sends worker:leave, again while the server refuses it for its rate
 * (resendWhileRateLimited) and `stillLeaving()` holds: a leave lost to the
 * limit left the worker in the run, and each round waited for its gradient
 * until the deadline, round after round, until it counted as dormant. A
 * worker that has joined again meanwhile stops sending it.
 */
export function requestLeave(socket: AppSocket, stillLeaving: () => boolean): Promise<RequestResult<object>> {
  const event = 'worker:leave';
  return resendWhileRateLimited(async (): Promise<RequestResult<object>> => {
    if (!stillLeaving()) return { ok: true };
    // worker:leave takes no payload, only the ack (the cast as in requestOnce).
    return answerOf(socket, event, (timed) =>
      (timed as unknown as { emitWithAck(name: typeof event): Promise<Ack> }).emitWithAck(event),
    );
  }, REQUEST_TIMEOUT_MS);
}
