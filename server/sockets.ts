/**
 * The socket layer: the handshake (admin token), and for every client event
 * the same path — rate limit, parse, check, act, answer. Payloads come from
 * untrusted clients, so handlers receive `unknown` and validate; a refusal is
 * answered on the ack (when there is one) and as server:error, and no error
 * ever escapes into socket.io.
 */
import { timingSafeEqual } from 'node:crypto';
import { ADMIN_EVENTS, runRoom, type Ack, type ProtocolError, type WorkerAssignment } from '../core/protocol';
import { FrameMeter, type EnginePacket } from '../core/traffic/frames';
import type { AdminHandlers } from './admin';
import { ProtocolFault } from './fault';
import { DASHBOARD_ROOM, type AppServer, type AppSocket, type EventHandlers } from './io';
import type { RateLimit } from './limits';
import { createRateLimiter } from './rateLimit';
import type { RunRegistry, WorkerNotifier } from './runs';
import { parseJoinRequest, parseSubmission, parseSubscribeRequest } from './validation';
import type { WorkerIdentity, WorkerRegistry } from './workers';

/** What the socket layer needs. */
export interface SocketDeps {
  readonly registry: RunRegistry;
  readonly workers: WorkerRegistry;
  readonly admin: AdminHandlers;
  readonly adminToken: string;
  readonly rateLimit: RateLimit;
  /** Where server bugs are reported (a refused message is not one). */
  readonly logError: (error: unknown) => void;
}

type Handler = (socket: AppSocket, payload: unknown) => object;

/** The events any socket may send; the admin ones are in AdminHandlers. */
type WorkerEvent = 'worker:join' | 'worker:leave' | 'gradient:submit' | 'dashboard:subscribe';

const ADMIN_EVENT_NAMES: ReadonlySet<string> = new Set(ADMIN_EVENTS);

/** Checks the admin token in constant time. */
function tokenMatches(presented: unknown, expected: string): boolean {
  if (typeof presented !== 'string') return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Leaves every run room (a socket is in at most one). */
function leaveRunRooms(socket: AppSocket): void {
  for (const room of socket.rooms) if (room.startsWith('run:')) void socket.leave(room);
}

/** The notifier the registry uses to reach a worker's socket. */
export function createWorkerNotifier(io: AppServer): WorkerNotifier {
  const socketOf = (identity: WorkerIdentity) => (identity.socketId === null ? undefined : io.sockets.sockets.get(identity.socketId));
  return {
    assigned(identity: WorkerIdentity, assignment: WorkerAssignment) {
      const socket = socketOf(identity);
      if (!socket) return;
      leaveRunRooms(socket);
      void socket.join(runRoom(assignment.runId));
      socket.emit('worker:assigned', assignment);
    },
    removed(identity: WorkerIdentity, reason: string) {
      const socket = socketOf(identity);
      if (!socket) return;
      leaveRunRooms(socket);
      socket.data.workerId = null;
      socket.emit('worker:removed', { workerId: identity.workerId, reason });
    },
  };
}

/** Installs the handshake check and the event handlers. */
export function attachSockets(io: AppServer, deps: SocketDeps): void {
  const { registry, workers } = deps;

  io.use((socket, next) => {
    try {
      const auth: unknown = socket.handshake.auth;
      const presented = typeof auth === 'object' && auth !== null ? (auth as Record<string, unknown>)['adminToken'] : undefined;
      socket.data.admin = false;
      socket.data.workerId ??= null;
      if (presented === undefined) return next();
      // The message never repeats what was presented: a near-miss token must not reach a log.
      if (!tokenMatches(presented, deps.adminToken)) return next(new Error('forbidden: wrong admin token'));
      socket.data.admin = true;
      next();
    } catch (error) {
      deps.logError(new Error('socket handshake failed', { cause: error }));
      next(new Error('handshake failed'));
    }
  });

  const workerHandlers: EventHandlers<WorkerEvent> = {
    'worker:join': (socket, payload) => {
      const request = parseJoinRequest(payload);
      const previous = socket.data.workerId;
      const { identity, accepted } = registry.join(request, socket.id, socket.handshake.address);
      if (previous !== null && previous !== identity.workerId) registry.disconnect(previous, socket.id);
      socket.data.workerId = identity.workerId;
      leaveRunRooms(socket);
      void socket.join(runRoom(accepted.runId));
      return accepted;
    },
    'worker:leave': (socket) => {
      const workerId = socket.data.workerId;
      if (workerId !== null) registry.disconnect(workerId, socket.id);
      socket.data.workerId = null;
      leaveRunRooms(socket);
      return {};
    },
    'gradient:submit': (socket, payload) => {
      const submission = parseSubmission(payload);
      const own = socket.data.workerId;
      if (own === null) throw new ProtocolFault('not-joined', 'join before sending gradients');
      const identity = workers.get(own);
      if (submission.workerId !== own || identity?.socketId !== socket.id) {
        throw new ProtocolFault('not-your-worker', `this socket sends for worker ${own}, not ${submission.workerId}`);
      }
      const run = registry.get(submission.runId);
      if (identity.runId !== run.id) throw new ProtocolFault('wrong-run', `worker ${own} trains in run ${identity.runId}, not ${run.id}`);
      return run.acceptGradient(own, submission);
    },
    'dashboard:subscribe': (socket, payload) => {
      const request = parseSubscribeRequest(payload);
      const runs = request.runId === undefined ? registry.list() : [registry.get(request.runId)];
      void socket.join(DASHBOARD_ROOM);
      return { runs: registry.list().map((run) => run.summary()), history: Object.fromEntries(runs.map((run) => [run.id, run.history])) };
    },
  };

  /** The error boundary of the handlers that have no ack: a throw is logged, never left to socket.io. */
  const guard = (what: string, fn: () => void) => {
    try {
      fn();
    } catch (error) {
      deps.logError(new Error(`socket ${what} failed`, { cause: error }));
    }
  };

  io.on('connection', (socket) => {
    const allow = createRateLimiter(deps.rateLimit);
    // Every frame both ways, as on the wire, for the run of whichever worker this socket is at the time.
    const meter = new FrameMeter((direction, category, bytes) => {
      const workerId = socket.data.workerId;
      if (workerId !== null) guard('traffic', () => registry.recordFrame(workerId, direction, category, bytes));
    });
    socket.conn.on('packet', (packet: EnginePacket) => guard('traffic', () => meter.record('up', packet)));
    socket.conn.on('packetCreate', (packet: EnginePacket) => guard('traffic', () => meter.record('down', packet)));
    guard('reconnect', () => {
      if (socket.recovered && socket.data.workerId !== null) registry.reconnect(socket.data.workerId, socket.id);
    });

    const refuse = (event: string, error: ProtocolError, ack: ((response: Ack) => void) | undefined) => {
      socket.emit('server:error', error);
      ack?.({ ok: false, error });
    };

    // One listener for every event: unknown names are refused too, not silently dropped.
    socket.onAny((event: unknown, ...args: unknown[]) => {
      const name = typeof event === 'string' ? event : String(event);
      const last = args[args.length - 1];
      const ack = typeof last === 'function' ? (last as (response: Ack) => void) : undefined;
      const payload = args[0];
      try {
        if (!allow()) throw new ProtocolFault('rate-limited', `more than ${deps.rateLimit.perSecond} messages a second`);
        let handler: Handler | undefined;
        if (ADMIN_EVENT_NAMES.has(name)) {
          if (!socket.data.admin) throw new ProtocolFault('forbidden', `${name} needs the admin token`);
          const adminHandler = deps.admin[name as keyof AdminHandlers];
          handler = (_socket, p) => adminHandler(p);
        } else {
          handler = Object.hasOwn(workerHandlers, name) ? (workerHandlers[name as WorkerEvent] as Handler) : undefined;
        }
        if (handler === undefined) throw new ProtocolFault('bad-message', `unknown event ${JSON.stringify(name).slice(0, 60)}`);
        const result = handler(socket, payload);
        ack?.({ ok: true, ...result });
      } catch (error) {
        if (error instanceof ProtocolFault) {
          refuse(name, error.toProtocolError(name), ack);
        } else {
          deps.logError(error);
          refuse(name, { code: 'internal', message: 'the server failed on this message; it was dropped', event: name }, ack);
        }
      }
    });

    socket.on('disconnect', () =>
      guard('disconnect', () => {
        const workerId = socket.data.workerId;
        if (workerId !== null) registry.disconnect(workerId, socket.id);
      }),
    );
  });
}
