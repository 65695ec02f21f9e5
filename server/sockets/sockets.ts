/**
 * The socket layer: the handshake (admin token), and for every client event
 * the same path — rate limit, parse, check, act, answer. Payloads come from
 * untrusted clients, so handlers receive `unknown` and validate; a refusal is
 * answered on the ack (when there is one) and as server:error, and no error
 * ever escapes into socket.io.
 */
import { timingSafeEqual } from 'node:crypto';
import {
  ADMIN_EVENTS,
  runRoom,
  type Ack,
  type DashboardSnapshot,
  type GradientReceipt,
  type JoinAccepted,
  type JoinRequest,
  type ProtocolError,
  type RunId,
  type WorkerAssignment,
  type WorkerId,
} from '../../core/protocol';
import { FrameMeter, type Direction, type EnginePacket, type FrameCategory } from '../../core/traffic/frames';
import type { AdminEvent, AdminHandlers } from './admin';
import { ProtocolFault } from '../protocol/fault';
import {
  DASHBOARD_ROOM,
  andThen,
  type AckResult,
  type AppServer,
  type AppSocket,
  type Awaitable,
  type EventHandlers,
} from './io';
import type { RateLimit } from '../protocol/limits';
import { createRateLimiter } from '../protocol/rateLimit';
import type { RunRegistry } from '../run/runs';
import {
  parseJoinRequest,
  parseModelRequest,
  parseSubmission,
  parseSubscribeRequest,
  type SubmissionEnvelope,
} from '../protocol/validation';
import type { WorkerIdentity, WorkerRegistry } from '../run/workers';

/**
 * What the socket layer asks of the runs once a message is parsed: the
 * registry in one process (registryBackend), the cluster's leader in several
 * (server/cluster, docs/scaling.md). Socket state (socket.data, rooms) stays
 * with the socket layer.
 */
export interface SocketBackend {
  /** worker:join from socket `socketId` at `address`; `previous` is the worker it spoke for until now. */
  join(
    request: JoinRequest,
    socketId: string,
    address: string,
    previous: WorkerId | null,
  ): Awaitable<{ workerId: WorkerId; accepted: JoinAccepted }>;
  /** The worker's socket left its run or went away. */
  disconnect(workerId: WorkerId, socketId: string): void;
  /** A socket that connection state recovery restored is its worker's again. */
  reconnect(workerId: WorkerId, socketId: string): void;
  /** A frame of the worker's socket (core/traffic). */
  recordFrame(workerId: WorkerId, direction: Direction, category: FrameCategory, bytes: number): void;
  /** gradient:submit, parsed, from the socket that speaks for `workerId`. */
  submit(workerId: WorkerId, socketId: string, submission: SubmissionEnvelope): Awaitable<GradientReceipt>;
  /** model:request: the worker's replica of `runId`'s model failed its hash check (docs/protocol.md, "Downlink"). */
  requestModel(workerId: WorkerId, socketId: string, runId: RunId): Awaitable<void>;
  /** dashboard:subscribe's snapshot. */
  subscribe(runId: RunId | undefined): Awaitable<DashboardSnapshot>;
  /** A teacher event (the token was checked). */
  admin<E extends AdminEvent>(event: E, payload: unknown): Awaitable<AckResult<E>>;
}

/** The backend of one process: its registry, identities and admin handlers. */
export function registryBackend(registry: RunRegistry, workers: WorkerRegistry, admin: AdminHandlers): SocketBackend {
  return {
    join: (request, socketId, address, previous) => {
      const { identity, accepted } = registry.join(request, socketId, address);
      if (previous !== null && previous !== identity.workerId) registry.disconnect(previous, socketId);
      return { workerId: identity.workerId, accepted };
    },
    disconnect: (workerId, socketId) => registry.disconnect(workerId, socketId),
    reconnect: (workerId, socketId) => registry.reconnect(workerId, socketId),
    recordFrame: (workerId, direction, category, bytes) => registry.recordFrame(workerId, direction, category, bytes),
    submit: (workerId, socketId, submission) => {
      const identity = workers.get(workerId);
      if (submission.workerId !== workerId || identity?.socketId !== socketId) {
        throw new ProtocolFault(
          'not-your-worker',
          `this socket sends for worker ${workerId}, not ${submission.workerId}`,
        );
      }
      const run = registry.get(submission.runId);
      if (identity.runId !== run.id)
        throw new ProtocolFault('wrong-run', `worker ${workerId} trains in run ${identity.runId}, not ${run.id}`);
      return run.acceptGradient(workerId, submission);
    },
    requestModel: (workerId, socketId, runId) => {
      const identity = workers.get(workerId);
      if (identity?.socketId !== socketId)
        throw new ProtocolFault('not-your-worker', `this socket no longer speaks for worker ${workerId}`);
      const run = registry.get(runId);
      if (identity.runId !== run.id)
        throw new ProtocolFault('wrong-run', `worker ${workerId} trains in run ${identity.runId}, not ${run.id}`);
      run.requestSync(workerId);
    },
    subscribe: (runId) => {
      const runs = runId === undefined ? registry.list() : [registry.get(runId)];
      return {
        runs: registry.list().map((run) => run.summary()),
        history: Object.fromEntries(runs.map((run) => [run.id, run.history])),
      };
    },
    admin: (event, payload) => admin[event](payload),
  };
}

/** What the socket layer needs. */
export interface SocketDeps {
  readonly backend: SocketBackend;
  readonly adminToken: string;
  readonly rateLimit: RateLimit;
  /** Where server bugs are reported (a refused message is not one). */
  readonly logError: (error: unknown) => void;
}

type Handler = (socket: AppSocket, payload: unknown) => Awaitable<object>;

/** The events any socket may send; the admin ones are in AdminHandlers. */
type WorkerEvent = 'worker:join' | 'worker:leave' | 'gradient:submit' | 'model:request' | 'dashboard:subscribe';

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

/** What the socket notices need of an identity: its worker and its socket. */
type NotifiedSocket = Pick<WorkerIdentity, 'workerId' | 'socketId'>;

/** The registry's notices over socket.io; a cluster's process takes them from the leader (server/cluster). */
export interface SocketNotifier {
  assigned(identity: NotifiedSocket, assignment: WorkerAssignment): void;
  removed(identity: NotifiedSocket, reason: string): void;
}

/** The notifier the registry uses to reach a worker's socket. */
export function createWorkerNotifier(io: AppServer): SocketNotifier {
  const socketOf = (identity: NotifiedSocket) =>
    identity.socketId === null ? undefined : io.sockets.sockets.get(identity.socketId);
  return {
    assigned(identity: NotifiedSocket, assignment: WorkerAssignment) {
      const socket = socketOf(identity);
      if (!socket) return;
      leaveRunRooms(socket);
      void socket.join(runRoom(assignment.runId));
      socket.emit('worker:assigned', assignment);
    },
    removed(identity: NotifiedSocket, reason: string) {
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
  const { backend } = deps;

  io.use((socket, next) => {
    try {
      const auth: unknown = socket.handshake.auth;
      const presented =
        typeof auth === 'object' && auth !== null ? (auth as Record<string, unknown>)['adminToken'] : undefined;
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
      return andThen(
        backend.join(request, socket.id, socket.handshake.address, socket.data.workerId),
        ({ workerId, accepted }) => {
          socket.data.workerId = workerId;
          leaveRunRooms(socket);
          void socket.join(runRoom(accepted.runId));
          return accepted;
        },
      );
    },
    'worker:leave': (socket) => {
      const workerId = socket.data.workerId;
      if (workerId !== null) backend.disconnect(workerId, socket.id);
      socket.data.workerId = null;
      leaveRunRooms(socket);
      return {};
    },
    'gradient:submit': (socket, payload) => {
      const submission = parseSubmission(payload);
      const own = socket.data.workerId;
      if (own === null) throw new ProtocolFault('not-joined', 'join before sending gradients');
      return backend.submit(own, socket.id, submission);
    },
    'model:request': (socket, payload) => {
      const request = parseModelRequest(payload);
      const own = socket.data.workerId;
      if (own === null) throw new ProtocolFault('not-joined', 'join before asking for the model');
      return andThen(backend.requestModel(own, socket.id, request.runId), () => ({}));
    },
    'dashboard:subscribe': (socket, payload) => {
      const request = parseSubscribeRequest(payload);
      return andThen(backend.subscribe(request.runId), (snapshot) => {
        void socket.join(DASHBOARD_ROOM);
        return snapshot;
      });
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
      if (workerId !== null) guard('traffic', () => backend.recordFrame(workerId, direction, category, bytes));
    });
    socket.conn.on('packet', (packet: EnginePacket) => guard('traffic', () => meter.record('up', packet)));
    socket.conn.on('packetCreate', (packet: EnginePacket) => guard('traffic', () => meter.record('down', packet)));
    guard('reconnect', () => {
      if (socket.recovered && socket.data.workerId !== null) backend.reconnect(socket.data.workerId, socket.id);
    });

    const refuse = (event: string, error: ProtocolError, ack: ((response: Ack) => void) | undefined) => {
      socket.emit('server:error', error);
      ack?.({ ok: false, error });
    };
    const fail = (name: string, error: unknown, ack: ((response: Ack) => void) | undefined) => {
      if (error instanceof ProtocolFault) {
        refuse(name, error.toProtocolError(name), ack);
      } else {
        deps.logError(error);
        refuse(
          name,
          { code: 'internal', message: 'the server failed on this message; it was dropped', event: name },
          ack,
        );
      }
    };

    // One listener for every event: unknown names are refused too, not silently dropped.
    socket.onAny((event: unknown, ...args: unknown[]) => {
      const name = typeof event === 'string' ? event : String(event);
      const last = args[args.length - 1];
      const ack = typeof last === 'function' ? (last as (response: Ack) => void) : undefined;
      const payload = args[0];
      try {
        if (!allow())
          throw new ProtocolFault('rate-limited', `more than ${deps.rateLimit.perSecond} messages a second`);
        let handler: Handler | undefined;
        if (ADMIN_EVENT_NAMES.has(name)) {
          if (!socket.data.admin) throw new ProtocolFault('forbidden', `${name} needs the admin token`);
          handler = (_socket, p) => backend.admin(name as AdminEvent, p);
        } else {
          handler = Object.hasOwn(workerHandlers, name) ? (workerHandlers[name as WorkerEvent] as Handler) : undefined;
        }
        if (handler === undefined)
          throw new ProtocolFault('bad-message', `unknown event ${JSON.stringify(name).slice(0, 60)}`);
        const result = handler(socket, payload);
        if (result instanceof Promise) {
          // Answered later (a cluster's leader); the same boundary holds for a rejection.
          result.then(
            (resolved) => ack?.({ ok: true, ...resolved }),
            (error: unknown) => fail(name, error, ack),
          );
        } else {
          ack?.({ ok: true, ...result });
        }
      } catch (error) {
        fail(name, error, ack);
      }
    });

    socket.on('disconnect', () =>
      guard('disconnect', () => {
        const workerId = socket.data.workerId;
        if (workerId !== null) backend.disconnect(workerId, socket.id);
      }),
    );
  });
}
