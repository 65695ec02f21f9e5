/** The typed socket.io server of the aggregator: events from core/protocol.ts, plus per-socket data. */
import type { Server, Socket } from 'socket.io';
import type { ClientToServerEvents, ServerToClientEvents, WorkerId } from '../../core/protocol';

/** What the server remembers per socket (restored with the socket by connection state recovery). */
export interface SocketData {
  /** Set by the handshake when the admin token was presented. */
  admin: boolean;
  /** Set by worker:join. */
  workerId: WorkerId | null;
}

/** The aggregator's socket.io server. */
export type AppServer = Server<ClientToServerEvents, ServerToClientEvents, Record<string, never>, SocketData>;
/** One connection on it. */
export type AppSocket = Socket<ClientToServerEvents, ServerToClientEvents, Record<string, never>, SocketData>;

/** The response type of an event's ack, as ClientToServerEvents declares it. */
type AckResponse<E extends keyof ClientToServerEvents> = Parameters<
  Extract<Parameters<ClientToServerEvents[E]>[number], (response: never) => void>
>[0];

/** What a handler of event E returns: the ack's success payload without `ok`, checked against the protocol. */
export type AckResult<E extends keyof ClientToServerEvents> = Omit<
  Extract<AckResponse<E>, { readonly ok: true }>,
  'ok'
>;

/** A value now, or later (a cluster asks its leader over Redis, docs/scaling.md). */
export type Awaitable<T> = T | Promise<T>;

/** Applies `fn` to a value now, or once a promise resolves: one process stays synchronous (not named `then`: a module
 * exporting `then` is a thenable, and awaiting its import never ends). */
export function andThen<T, U>(value: Awaitable<T>, fn: (resolved: T) => U): Awaitable<U> {
  return value instanceof Promise ? value.then(fn) : fn(value);
}

/**
 * One handler per event of E: untrusted payload in, the ack's result out (throws or rejects with ProtocolFault to
 * refuse).
 */
export type EventHandlers<E extends keyof ClientToServerEvents> = {
  readonly [K in E]: (socket: AppSocket, payload: unknown) => Awaitable<AckResult<K>>;
};

/** Room of every subscribed dashboard. */
export const DASHBOARD_ROOM = 'dashboards';
