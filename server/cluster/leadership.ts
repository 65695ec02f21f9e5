/**
 * The leader of a cluster (docs/scaling.md, "The leader"): the process that
 * holds the lease runs the one-process aggregator (server/aggregator.ts:
 * registry, runs, round machines, simulated workers), unchanged, over Redis.
 * What a follower's socket asks (join, subscribe, model:request, teacher
 * events, /api) comes here as a call; round:open goes to every process with
 * each of its deliveries (the model, a sync, the compressed or relayed
 * update); each gradient arrives as a report (with its raw bytes under the
 * `relay` and `auto` downlinks) while its estimate stays on its process; a closing
 * round is sealed everywhere, then planned, then summed from the partial
 * sums (core/aggregation/exactSum.ts), the leader adding its own simulated
 * workers', so the update is bit for bit the one process's. Each round is
 * checkpointed in Redis, fenced by the lease, before anyone hears of it.
 */
import type { Aggregate } from '../../core/aggregation';
import type { Dataset } from '../../core/data';
import type { RunConfigPatch, RunId, WorkerId } from '../../core/protocol';
import { createAggregator, type Aggregator } from '../aggregator';
import type { StoredRun } from '../persistence/checkpoint';
import { ProtocolFault } from '../protocol/fault';
import { andThen, type AppServer, type Awaitable } from '../sockets/io';
import type { IdentityLimits } from '../protocol/limits';
import type { ModelRuntime } from '../model/model';
import type { OpenRound } from '../run/round';
import type { RoundDelivery, Run } from '../run/run';
import type { RunRegistry, WorkerNotifier } from '../run/runs';
import type { WorkerIdentity, WorkerRegistry, WorkersSnapshot } from '../run/workers';
import type { Bus, BusMessage } from './bus';
import type { ProcessCounters } from './health';
import {
  packDeliveries,
  type CallArgs,
  type CallMethod,
  type CallResult,
  type ClusterHeader,
  type ContribHeader,
  type NotifyBody,
  type OpenHeader,
  type ResyncHeader,
  type ToLeaderHeader,
} from './messages';
import { Closing, contributionOf, type Held } from './closing';
import { CoalescedWrites } from './coalescedWrites';
import { LeaseLost, type ClusterState } from './state';

/** The leader's answer to each call: the socket backend's, or the /api source's. */
type CallHandlers = { readonly [M in CallMethod]: (from: string, args: CallArgs<M>) => Awaitable<CallResult<M>> };

/** What the leader needs. */
export interface LeadershipDeps {
  readonly bus: Bus;
  readonly state: ClusterState;
  /** The lease value ("<processId> <term>") every write is fenced with. */
  readonly lease: string;
  readonly term: number;
  readonly io: AppServer;
  readonly model: ModelRuntime;
  /** The training split, for the server's simulated workers (they run on the leader). */
  readonly train?: Dataset | null;
  readonly maxMessageBytes: number;
  readonly identityLimits?: Partial<IdentityLimits>;
  readonly defaultRun?: RunConfigPatch | false;
  readonly logError: (error: unknown) => void;
  /** Events an operator should see (a process written off). */
  readonly logInfo: (line: string) => void;
  /** This process's counts (server/cluster/health.ts). */
  readonly counters: () => ProcessCounters;
  /** A fenced write found the lease gone: this process must stop leading. */
  readonly onLeaseLost: () => void;
}

/** The leader: loads the cluster's state from Redis and serves the other processes. */
export class Leadership {
  readonly term: number;
  readonly registry: RunRegistry;
  readonly workers: WorkerRegistry;
  readonly #aggregator: Aggregator;
  readonly #deps: LeadershipDeps;
  /** Every socket that spoke for a worker: its process and worker. */
  readonly #sockets = new Map<string, { process: string; workerId: WorkerId }>();
  readonly #held = new Map<RunId, Held>();
  readonly #closing = new Map<RunId, Closing>();
  readonly #writes = new CoalescedWrites();
  readonly #createdAt = new Map<RunId, number>();
  /** The newest checkpoint write of each run: resolves once that state is in Redis. */
  readonly #lastSave = new Map<RunId, Promise<void>>();
  #disposed = false;

  private constructor(deps: LeadershipDeps) {
    this.#deps = deps;
    this.term = deps.term;
    this.#aggregator = createAggregator({
      io: deps.io,
      model: deps.model,
      store: {
        saveRun: (stored) => void this.#saveRun(stored),
        saveWorkers: (snapshot) => void this.#saveWorkers(snapshot),
        deleteRun: (runId) =>
          void this.#writes
            .write(`run:${runId}`, () => deps.state.deleteRun(deps.lease, runId))
            .catch((error: unknown) => this.#writeFailed(error)),
      },
      train: deps.train ?? null,
      ...(deps.identityLimits === undefined ? {} : { identityLimits: deps.identityLimits }),
      maxMessageBytes: deps.maxMessageBytes,
      logError: deps.logError,
      broadcast: {
        persistOnClose: false,
        // Dashboards may sit on any process: always publish, at most once a second per run. Each summary lists every
        // worker and crosses Redis to every process (about 0.15 MB at 600 tabs): at four a second it was most of what
        // a cluster put through Redis (docs/scaling.md, "A 10,000-tab event").
        anyDashboards: () => true,
        stateEveryMs: 1000,
      },
      deliver: (run, deliveries) => this.#deliver(run, deliveries),
      combine: (run, round) => this.#combine(run, round),
      roundClosed: (run, metrics) => {
        this.#held.delete(run.id);
        this.broadcast({ t: 'done', term: this.term, runId: run.id, version: metrics.version });
      },
      commitRound: (run, runs) => {
        runs.persist(run);
        return this.#lastSave.get(run.id) ?? Promise.resolve();
      },
      notifier: this.#notifier(),
    });
    this.registry = this.#aggregator.runs;
    this.workers = this.#aggregator.workers;
  }

  /** Becomes the leader: restores every run and identity from Redis, then tells every process. */
  static async start(deps: LeadershipDeps): Promise<Leadership> {
    const leadership = new Leadership(deps);
    const stored = await deps.state.load(deps.logError);
    for (const run of stored.runs) leadership.#createdAt.set(run.snapshot.runId, run.createdAt);
    leadership.#aggregator.restore(stored, deps.defaultRun);
    leadership.broadcast({ t: 'leader', term: deps.term });
    return leadership;
  }

  /** Sends to every process (this one included). */
  broadcast(header: ClusterHeader, blobs: readonly Buffer[] = []): void {
    if (this.#disposed) return;
    this.#deps.bus
      .broadcast(header, blobs)
      .catch((error: unknown) =>
        this.#deps.logError(new Error(`cluster: broadcasting ${header.t} failed`, { cause: error })),
      );
  }

  /** A follower's call (or this process's own, directly); throws ProtocolFault to refuse. */
  call<M extends CallMethod>(from: string, method: M, args: CallArgs<M>): Awaitable<CallResult<M>> {
    const handler: CallHandlers[M] = this.#calls[method];
    return handler(from, args);
  }

  /** The calls, by method. */
  readonly #calls: CallHandlers = {
    join: (from, { request, socketId, address, previous }) => {
      const backend = this.#aggregator.backend;
      // A worker back on another socket (another process, or its old one died) leaves the open round first:
      // its new process never saw that round open, so it waits for the next, as a late joiner does.
      const key = request.workerKey;
      const identity = key === undefined ? undefined : this.workers.findByKey(key);
      const counters = this.#deps.counters();
      counters.joins += 1;
      if (identity !== undefined) counters.rejoins += 1;
      if (identity !== undefined && identity.socketId !== null && identity.socketId !== socketId) {
        backend.disconnect(identity.workerId, identity.socketId);
        this.#sockets.delete(identity.socketId);
      }
      return andThen(backend.join(request, socketId, address, previous), (joined) => {
        this.#sockets.set(socketId, { process: from, workerId: joined.workerId });
        return joined;
      });
    },
    disconnect: (from, { workerId, socketId }) => {
      const known = this.#sockets.get(socketId);
      if (known !== undefined && known.process !== from) return null; // the socket moved on meanwhile
      this.#sockets.delete(socketId);
      this.#aggregator.backend.disconnect(workerId, socketId);
      return null;
    },
    reconnect: (from, { workerId, socketId }) => {
      this.#sockets.set(socketId, { process: from, workerId });
      this.#aggregator.backend.reconnect(workerId, socketId);
      return null;
    },
    hello: (from, { sockets }) => {
      for (const [socketId, workerId] of sockets) {
        this.#sockets.set(socketId, { process: from, workerId });
        this.#aggregator.backend.reconnect(workerId, socketId);
      }
      return null;
    },
    traffic: (_from, { frames }) => {
      for (const [workerId, direction, category, bytes] of frames)
        this.#aggregator.backend.recordFrame(workerId, direction, category, bytes);
      return null;
    },
    requestModel: (_from, { workerId, socketId, runId }) =>
      andThen(this.#aggregator.backend.requestModel(workerId, socketId, runId), () => null),
    subscribe: (_from, { runId }) => this.#aggregator.backend.subscribe(runId),
    admin: (_from, { event, payload }) => this.#aggregator.backend.admin(event, payload),
    runCount: () => this.#aggregator.api.runCount(),
    summaries: () => this.#aggregator.api.summaries(),
    history: (_from, { runId }) => this.#aggregator.api.history(runId),
  };

  /** A message addressed to the leader. */
  handle(message: BusMessage<ToLeaderHeader>): void {
    if (this.#disposed) return;
    const { header, blobs } = message;
    if (header.term !== this.term) return; // about another leader's rounds
    switch (header.t) {
      case 'contrib':
        this.#contribution(header, header.from, blobs);
        return;
      case 'sealed':
        this.#closing.get(header.runId)?.sealed(header.from);
        return;
      case 'partial':
        this.#closing.get(header.runId)?.partial(header.from, header, blobs);
        return;
    }
  }

  /** Checks that every process holding a socket or a gradient still beats; the gone ones are written off. */
  async checkProcesses(): Promise<void> {
    const processes = new Set<string>();
    for (const { process } of this.#sockets.values()) processes.add(process);
    for (const held of this.#held.values()) {
      for (const { process } of held.byWorker.values()) processes.add(process);
      for (const process of held.participants.values()) processes.add(process);
    }
    for (const closing of this.#closing.values()) for (const process of closing.waitingOn()) processes.add(process);
    processes.delete(this.#deps.bus.self);
    const alive = await this.#deps.state.alive([...processes]);
    for (const process of processes) if (!alive.has(process) && !this.#disposed) this.processGone(process);
  }

  /** A process is gone: its gradients no longer count, its workers are disconnected (they rejoin elsewhere). */
  processGone(process: string): void {
    this.#deps.logInfo(`process ${process} stopped beating; the leader writes its workers and gradients off`);
    for (const closing of this.#closing.values()) closing.processGone(process);
    for (const [runId, held] of this.#held) {
      const lost = [...held.byWorker].filter(([, h]) => h.process === process).map(([w]) => w);
      for (const workerId of lost) held.byWorker.delete(workerId);
      for (const [workerId, p] of held.participants) if (p === process) held.participants.delete(workerId);
      const run = this.registry.list().find((r) => r.id === runId);
      if (run?.round?.version === held.version) run.forgetContributions(lost);
    }
    for (const [socketId, socket] of [...this.#sockets]) {
      if (socket.process !== process) continue;
      this.#sockets.delete(socketId);
      this.#aggregator.backend.disconnect(socket.workerId, socketId);
    }
  }

  /** Stops leading: every timer stops, nothing more is written. */
  dispose(): void {
    this.#disposed = true;
    this.#aggregator.dispose();
  }

  /** Writes every run and the identities (a clean stop), and waits for it. */
  async flush(): Promise<void> {
    const writes = this.registry.list().map((run) => {
      this.registry.persist(run);
      return this.#lastSave.get(run.id) ?? Promise.resolve();
    });
    await Promise.allSettled([...writes, this.#saveWorkers(this.workers.snapshot())]);
  }

  /** A Closing is over. */
  closed(closing: Closing): void {
    if (this.#closing.get(closing.run.id) === closing) this.#closing.delete(closing.run.id);
  }

  /**
   * round:open, to every process with the model or the update: each process sends its own participants theirs. A
   * delivery during the round it opened is a resync (model:request), which the processes only pass on.
   */
  #deliver(run: Run, deliveries: readonly RoundDelivery[]): void {
    const address = (workerId: WorkerId): readonly [string, string] | undefined => {
      const socketId = this.workers.get(workerId)?.socketId;
      const process = socketId === null || socketId === undefined ? undefined : this.#sockets.get(socketId)?.process;
      return process === undefined ? undefined : [socketId!, process];
    };
    const round = run.round;
    const version = deliveries[0]?.message.version ?? run.version;
    const { headers, blobs } = packDeliveries(deliveries, address);
    if (round !== null && this.#held.get(run.id)?.round === round) {
      const resync: ResyncHeader = { t: 'resync', term: this.term, runId: run.id, version, deliveries: headers };
      this.broadcast(resync, blobs);
      return;
    }
    const participants = deliveries.flatMap((d) => d.workers);
    const tuples: [WorkerId, string, string][] = participants.flatMap((workerId) => {
      const at = address(workerId);
      return at === undefined ? [] : [[workerId, ...at]];
    });
    this.#held.set(run.id, {
      version,
      round,
      participants: new Map(tuples.map(([w, , p]) => [w, p])),
      byWorker: new Map(),
    });
    const attacks = participants.flatMap((w) => {
      const attack = run.member(w)?.attack ?? null;
      return attack === null ? [] : [[w, attack] as const];
    });
    const header: OpenHeader = {
      t: 'open',
      term: this.term,
      runId: run.id,
      version,
      config: run.config,
      deliveries: headers,
      participants: tuples,
      attacks,
    };
    this.broadcast(header, blobs);
  }

  #contribution(header: ContribHeader, from: string, blobs: readonly Buffer[]): void {
    const closing = this.#closing.get(header.runId);
    if (closing !== undefined && closing.round.version === header.version) {
      closing.late(header, from, blobs);
      return;
    }
    const held = this.#held.get(header.runId);
    const run = this.registry.list().find((r) => r.id === header.runId);
    if (held === undefined || run === undefined || held.version !== header.version) return;
    held.byWorker.set(header.workerId, { process: from, stats: header.stats });
    try {
      run.acceptRemote(header.workerId, header.version, contributionOf(header, blobs), header.at, header.decodeMs);
    } catch (error) {
      // The worker left the round meanwhile (its disconnect came first): it does not count, as in one process.
      held.byWorker.delete(header.workerId);
      if (!(error instanceof ProtocolFault)) throw error;
    }
  }

  #combine(run: Run, round: OpenRound): Promise<Aggregate> {
    if (this.#closing.has(run.id)) return Promise.reject(new Error(`bug: run ${run.id} is closing two rounds`));
    const held = this.#held.get(run.id) ?? {
      version: round.version,
      round,
      participants: new Map(),
      byWorker: new Map(),
    };
    // Seal first: the plan waits for every process's answer, which follows all its reports on the same stream.
    this.broadcast({ t: 'seal', term: this.term, runId: run.id, version: round.version });
    const closing = new Closing(this, run, round, held);
    if (this.#closing.get(run.id) === undefined && !closing.settled) this.#closing.set(run.id, closing);
    return closing.promise;
  }

  #notifier(): WorkerNotifier {
    const tell = (identity: WorkerIdentity, body: NotifyBody) => {
      const { socketId, workerId } = identity;
      const process = socketId === null ? undefined : this.#sockets.get(socketId)?.process;
      if (process === undefined || socketId === null) return;
      this.#deps.bus
        .send(process, { t: 'notify', term: this.term, socketId, workerId, ...body })
        .catch((error: unknown) => this.#deps.logError(error));
    };
    return {
      assigned: (identity, assignment) => tell(identity, { kind: 'assigned', assignment }),
      removed: (identity, reason) => tell(identity, { kind: 'removed', reason }),
    };
  }

  #saveRun(stored: StoredRun): Promise<void> {
    const runId = stored.snapshot.runId;
    const createdAt = this.#createdAt.get(runId) ?? stored.createdAt;
    this.#createdAt.set(runId, createdAt);
    const done = this.#writes.write(`run:${runId}`, () =>
      this.#deps.state.saveRun(this.#deps.lease, { ...stored, createdAt }),
    );
    done.catch((error: unknown) => this.#writeFailed(error));
    this.#lastSave.set(runId, done);
    return done;
  }

  #saveWorkers(snapshot: WorkersSnapshot): Promise<void> {
    const done = this.#writes.write('workers', () => this.#deps.state.saveWorkers(this.#deps.lease, snapshot));
    done.catch((error: unknown) => this.#writeFailed(error));
    return done;
  }

  #writeFailed(error: unknown): void {
    if (error instanceof LeaseLost) {
      if (!this.#disposed) this.#deps.onLeaseLost();
      return;
    }
    this.#deps.logError(new Error('cluster: a checkpoint write to Redis failed', { cause: error }));
  }
}
