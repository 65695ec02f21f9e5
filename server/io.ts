/** The typed socket.io server of the aggregator: events from core/protocol.ts, plus per-socket data. */
import type { Server, Socket } from 'socket.io';
import type { ClientToServerEvents, ServerToClientEvents, WorkerId } from '../core/protocol';

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

/** Room of every subscribed dashboard. */
export const DASHBOARD_ROOM = 'dashboards';
