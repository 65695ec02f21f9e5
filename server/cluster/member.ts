/**
 * One process of a cluster (docs/scaling.md): the same HTTP front and socket
 * layer as one process, joined to the others by socket.io's Redis Streams
 * adapter (rooms, dashboards and broadcasts span the processes; a tab that
 * reconnects to another process recovers its session). Its sockets' joins,
 * subscriptions, teacher events and /api reads go to the leader; its
 * workers' gradients stay here (ingest.ts). Every process beats a heartbeat,
 * and each tries for the leader's lease when nobody holds it; the one that
 * gets it loads the cluster's state from Redis (leadership.ts) and the
 * others tell it who is connected where.
 */
import { randomBytes } from 'node:crypto';
import { createAdapter } from '@socket.io/redis-streams-adapter';
import { Redis } from 'ioredis';
import type { Dataset } from '../../core/data';
import type { GradientReceipt, RunConfigPatch, WorkerId } from '../../core/protocol';
import type { Direction, FrameCategory } from '../../core/traffic/frames';
import type { AdminEvent } from '../sockets/admin';
import { createFront, nodeScheduler, type Front } from '../http/front';
import { createApiHandler, type ApiSource } from '../http/api';
import { andThen, type AckResult, type Awaitable } from '../sockets/io';
import { joinInfo, type JoinInfo } from '../http/lan';
import { DEFAULT_RATE_LIMIT, computeMaxMessageBytes, type IdentityLimits, type RateLimit } from '../protocol/limits';
import type { ModelRuntime } from '../model/model';
import { attachSockets, createWorkerNotifier, type SocketBackend } from '../sockets/sockets';
import { Bus, type BusMessage } from './bus';
import { LeaderCalls } from './calls';
import { startHealth } from './health';
import { Ingest } from './ingest';
import { Keepalive } from './keepalive';
import { Leadership } from './leadership';
import type { ToLeaderHeader } from './messages';
import { ClusterState, RENEW_EVERY_MS, parseLease } from './state';

/** How to start one process of a cluster. */
export interface MemberOptions {
  readonly redisUrl: string;
  /** Key prefix of this cluster in Redis (several clusters may share one Redis). */
  readonly namespace: string;
  readonly clientDir: string;
  readonly adminToken: string;
  readonly model: ModelRuntime;
  /** The training split, for the server's simulated workers (worker:simulate), which run on the leader. */
  readonly train?: Dataset;
  readonly defaultRun?: RunConfigPatch | false;
  readonly identityLimits?: Partial<IdentityLimits>;
  readonly rateLimit?: RateLimit;
  readonly apiRateLimit?: RateLimit;
  readonly maxMessageBytes?: number;
  readonly logError?: (error: unknown) => void;
  /** Where the process's events and counts go (server/cluster/health.ts); the console by default. */
  readonly logInfo?: (line: string) => void;
  readonly tls?: { readonly key: string; readonly cert: string };
  readonly join?: () => JoinInfo;
}

/** A running process of a cluster. */
export interface ClusterMember extends Pick<Front, 'httpServer' | 'io'> {
  /** "<pid>.<random>": unique per start. */
  readonly processId: string;
  /** The leader's state when this process leads, else null. */
  leadership(): Leadership | null;
  /** Stops cleanly: the last checkpoints written, the lease given up, the sockets closed. */
  close(): Promise<void>;
}

/** How often this process's workers' frame counts go to the leader (ms). */
const TRAFFIC_EVERY_MS = 250;

/** Starts one process of a cluster; call `httpServer.listen` to serve. */
export async function createClusterMember(options: MemberOptions): Promise<ClusterMember> {
  const logError = options.logError ?? ((error: unknown) => console.error('[cluster]', error));
  const maxMessageBytes = options.maxMessageBytes ?? computeMaxMessageBytes();
  const logInfo = options.logInfo ?? ((line: string) => console.log(`[cluster] ${line}`));
  const processId = `${process.pid}.${randomBytes(3).toString('hex')}`;
  const health = startHealth(processId, logInfo);
  // null: commands wait through a brief Redis outage instead of failing (ioredis reconnects by itself).
  const commands = new Redis(options.redisUrl, { maxRetriesPerRequest: null, lazyConnect: true });
  commands.on('error', () => undefined);
  await commands.connect();
  const reader = commands.duplicate();
  reader.on('error', () => undefined);
  const adapterClient = commands.duplicate();
  adapterClient.on('error', () => undefined);
  const front = createFront({
    ...options,
    logError,
    maxMessageBytes,
    adapter: createAdapter(adapterClient, {
      streamName: `${options.namespace}:sio`,
      channelPrefix: `${options.namespace}:sio`,
      sessionKeyPrefix: `${options.namespace}:sio:session:`,
    }),
  });
  const { io } = front;
  const state = new ClusterState(commands, options.namespace);
  const bus = new Bus({
    commands,
    reader,
    namespace: options.namespace,
    processId,
    onError: logError,
    count: (direction, bytes) => {
      const counters = health.counters();
      if (direction === 'out') {
        counters.busSent += 1;
        counters.busSentBytes += bytes;
      } else {
        counters.busReceived += 1;
        counters.busReceivedBytes += bytes;
      }
    },
  });
  const localNotifier = createWorkerNotifier(io);

  let leader: { processId: string; term: number } | null = null;
  let leadership: Leadership | null = null;
  let lease: string | null = null;
  let closing = false;

  const toLeader = (header: ToLeaderHeader, blobs: readonly Buffer[] = []) => {
    if (leadership !== null) {
      leadership.handle({ header: { ...header, from: processId }, blobs });
    } else if (leader !== null) {
      bus
        .send(leader.processId, header, blobs)
        .catch((error: unknown) =>
          logError(new Error(`cluster: sending ${header.t} to the leader failed`, { cause: error })),
        );
    }
  };

  const ingest = new Ingest({
    self: processId,
    layout: (config) => options.model.layout(config.model),
    now: () => nodeScheduler.now(),
    toLeader,
    // One packet for all of this process's participants, encoded once and sent from here: through the adapter
    // (which stores every emit in Redis for connection state recovery) the model went to every process once per tab.
    emitOpen: (socketIds, round) => io.local.to([...socketIds]).emit('round:open', round),
  });

  const calls = new LeaderCalls({
    bus,
    processId,
    logError,
    counters: () => health.counters(),
    leader: () => leader,
    leadership: () => leadership,
  });

  /** Everyone this process holds a socket for, to a new leader. */
  const hello = () => {
    const sockets: [string, WorkerId][] = [];
    for (const socket of io.sockets.sockets.values())
      if (socket.data.workerId !== null) sockets.push([socket.id, socket.data.workerId]);
    calls.tell('hello', { sockets });
  };

  /**
   * A leader seen: by reading the lease (it may still be loading) or by its
   * own announcement once it is ready. A newer term voids the rounds of the
   * older; an announcement is answered with who is here and every call still
   * waiting (a hello sent while it loaded was not taken).
   */
  const observeLeader = (next: { processId: string; term: number }, announced: boolean) => {
    if (leader !== null && next.term < leader.term) return;
    if (leader === null || next.term > leader.term) {
      leader = next;
      ingest.reset();
    }
    if (!announced) return;
    calls.resend();
    hello();
  };

  const currentTerm = () => leader?.term ?? -1;
  const onMessage = ({ header, blobs }: BusMessage) => {
    switch (header.t) {
      case 'rpc':
        return calls.answer(header);
      case 'reply':
        return calls.onReply(header);
      case 'contrib':
      case 'sealed':
      case 'partial':
        return leadership?.handle({ header, blobs });
      case 'leader':
        return observeLeader({ processId: header.from, term: header.term }, true);
    }
    // The rest comes from a leader: ignore an older one's.
    if (header.term !== currentTerm()) return;
    switch (header.t) {
      case 'open':
        return ingest.open(header, blobs);
      case 'resync':
        return ingest.resync(header, blobs);
      case 'seal':
        return ingest.seal(header.term, header.runId, header.version);
      case 'plan':
        return ingest.plan(header);
      case 'done':
        return ingest.done(header.runId, header.version);
      case 'notify':
        if (header.kind === 'assigned') localNotifier.assigned(header, header.assignment);
        else localNotifier.removed(header, header.reason);
        return;
    }
  };

  // This process's workers' frames, summed and sent to the leader a few times a second.
  let traffic = new Map<string, [WorkerId, Direction, FrameCategory, number]>();
  const trafficTimer = setInterval(() => {
    if (traffic.size === 0) return;
    const frames = [...traffic.values()];
    traffic = new Map();
    try {
      calls.tell('traffic', { frames });
    } catch (error) {
      logError(error);
    }
  }, TRAFFIC_EVERY_MS);

  const backend: SocketBackend = {
    join: (request, socketId, address, previous) => calls.call('join', { request, socketId, address, previous }),
    disconnect: (workerId, socketId) => calls.tell('disconnect', { workerId, socketId }),
    reconnect: (workerId, socketId) => calls.tell('reconnect', { workerId, socketId }),
    recordFrame: (workerId, direction, category, bytes) => {
      const key = `${workerId}/${direction}/${category}`;
      const entry = traffic.get(key);
      if (entry) entry[3] += bytes;
      else traffic.set(key, [workerId, direction, category, bytes]);
    },
    submit: (workerId, _socketId, submission): GradientReceipt => ingest.submit(workerId, submission),
    requestModel: (workerId, socketId, runId) =>
      andThen(calls.call('requestModel', { workerId, socketId, runId }), () => {}),
    subscribe: (runId) => calls.call('subscribe', { runId }),
    // The leader answers for the event it was asked; the map's result is every event's.
    admin: <E extends AdminEvent>(event: E, payload: unknown) =>
      calls.call('admin', { event, payload }) as Awaitable<AckResult<E>>,
  };
  const api: ApiSource = {
    runCount: () => calls.call('runCount', {}),
    summaries: () => calls.call('summaries', {}),
    history: (runId) => calls.call('history', { runId }),
  };
  io.on('connection', (socket) => {
    const counters = health.counters();
    counters.connected += 1;
    if (socket.recovered) counters.recovered += 1;
    socket.on('disconnect', (reason) => health.counters().close(reason));
  });
  attachSockets(io, {
    backend,
    adminToken: options.adminToken,
    rateLimit: options.rateLimit ?? DEFAULT_RATE_LIMIT,
    logError,
  });
  front.setApiHandler(createApiHandler(api, options.join ?? (() => joinInfo(front.scheme, front.boundPort()))));

  /** The lease is gone (a renewal or a fenced write found another value): follow again. */
  const stepDown = () => {
    if (lease === null) return;
    logInfo(`process ${processId} lost the leader lease (term ${parseLease(lease).term}); it follows again`);
    keepalive.hold(null);
    leadership?.dispose();
    leadership = null;
    lease = null;
    leader = null;
  };

  const becomeLeader = async (value: string) => {
    const { term } = parseLease(value);
    lease = value;
    const loading = performance.now();
    const starting = Leadership.start({
      bus,
      state,
      lease: value,
      term,
      io,
      model: options.model,
      train: options.train ?? null,
      maxMessageBytes,
      ...(options.identityLimits === undefined ? {} : { identityLimits: options.identityLimits }),
      ...(options.defaultRun === undefined ? {} : { defaultRun: options.defaultRun }),
      logError,
      logInfo,
      counters: () => health.counters(),
      onLeaseLost: stepDown,
    });
    let started: Leadership;
    try {
      started = await starting;
    } catch (error) {
      // The state could not be loaded: give the lease up at once, so that this or another process tries again.
      if (lease === value) {
        lease = null;
        keepalive.hold(null);
        await state.releaseLeadership(value).catch(() => undefined);
      }
      throw error;
    }
    if (lease !== value || closing) {
      started.dispose();
      return;
    }
    leadership = started;
    logInfo(
      `process ${processId} leads ` +
        `(term ${term}; state loaded from Redis in ${(performance.now() - loading).toFixed(0)} ms)`,
    );
    observeLeader({ processId, term }, true);
  };

  // The heartbeat and the lease are renewed from a thread, so a busy event loop loses neither (keepalive.ts).
  const keepalive = await Keepalive.start(
    { redisUrl: options.redisUrl, namespace: options.namespace, processId },
    {
      // Our heartbeat had lapsed: the leader may have written our workers off; say who is here.
      onLapsed: () => {
        logInfo(`process ${processId}: its heartbeat had lapsed; it tells the leader which sockets it holds`);
        if (leader !== null) hello();
      },
      onLost: (value) => {
        if (lease === value) stepDown();
      },
      log: logInfo,
    },
  );

  /** The election, and the leader's check of the other processes' heartbeats. */
  let ticking = false;
  const tick = async () => {
    if (ticking || closing) return;
    ticking = true;
    try {
      if (lease !== null) {
        await leadership?.checkProcesses();
      } else {
        const current = await state.leader();
        if (current === null) {
          const value = await state.acquireLeadership(processId);
          if (value !== null) {
            keepalive.hold(value);
            await becomeLeader(value);
          }
        } else if (current.processId !== processId) {
          observeLeader(current, false);
        }
      }
    } catch (error) {
      logError(new Error('cluster: election or heartbeat check failed; retrying', { cause: error }));
    } finally {
      ticking = false;
    }
  };
  await bus.start(onMessage);
  await tick();
  const tickTimer = setInterval(() => void tick(), RENEW_EVERY_MS);

  return {
    httpServer: front.httpServer,
    io,
    processId,
    leadership: () => leadership,
    close: async () => {
      closing = true;
      clearInterval(tickTimer);
      clearInterval(trafficTimer);
      health.stop();
      const leading = leadership;
      if (leading !== null) {
        await leading.flush();
        leading.dispose();
        leadership = null;
      }
      await keepalive.stop();
      if (lease !== null) await state.releaseLeadership(lease).catch(() => undefined);
      await state.forget(processId).catch(() => undefined);
      bus.stop();
      await new Promise<void>((resolve) => void io.close(() => resolve()));
      for (const client of [reader, adapterClient, commands]) client.disconnect();
    },
  };
}
