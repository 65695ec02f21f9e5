/**
 * A worker's connection to the aggregator: joins (and rejoins after a
 * reconnect that socket.io could not recover) with the worker's key,
 * forwards the server's events to its listener, and submits gradients. It
 * holds no training logic; client/session drives it through the
 * `WorkerChannel` interface, and whoever hosts the session (a tab, a Web
 * Worker, a Node worker thread) passes a `ChannelFactory` in.
 */
import {
  PROTOCOL_VERSION,
  type GradientReceipt,
  type GradientSubmission,
  type JoinAccepted,
  type ProtocolError,
  type RoundClosed,
  type RoundMetrics,
  type RoundOpen,
  type RunId,
  type WorkerAssignment,
  type WorkerBackend,
  type WorkerId,
} from '../../core/protocol';
import type { WireTraffic } from '../../core/traffic/frames';
import {
  openSocket,
  request,
  requestLeave,
  socketMeter,
  type AppSocket,
  type OpenSocketOptions,
  type RequestError,
  type RequestResult,
} from './socket';
import type { IdentityStore } from './workerIdentity';

/** The state of the link itself. */
export type LinkState = 'connecting' | 'connected' | 'reconnecting';

/** What the channel reports; the session turns these into store updates and training. */
export interface WorkerChannelListener {
  onLink(state: LinkState): void;
  /** Joined (or rejoined), moved, or the run was reconfigured. */
  onAssigned(assignment: WorkerAssignment): void;
  onRoundOpen(round: RoundOpen): void;
  onRoundClosed(closed: RoundClosed): void;
  onMetrics(metrics: RoundMetrics): void;
  /** The teacher removed this worker, or no run is left. */
  onRemoved(reason: string): void;
  /** A join was refused, or the server refused one of our messages. */
  onError(error: RequestError): void;
}

/** Options of `WorkerChannel`. */
export interface WorkerChannelOptions {
  readonly identity: IdentityStore;
  /** Run to join on the first join (`?run=`); later rejoins return to the worker's own run. */
  readonly runId?: RunId;
  /** A name the teacher sees (the browser's), at most 40 characters. */
  readonly name: string;
  /** Where this tab computes now; asked at every join, since a lost GPU device moves the tab to the CPU. */
  readonly backend: () => WorkerBackend;
  readonly listener: WorkerChannelListener;
}

/** What the session asks of its connection. */
export interface WorkerChannel {
  /** This worker's id once joined. */
  readonly workerId: WorkerId | null;
  /** Joins the run; resolves whether it was accepted (a refusal goes to the listener). */
  join(): Promise<boolean>;
  /** Stops participating: leaves the open round and the run's room; the identity stays. */
  leave(): void;
  /** Sends a gradient; resolves with the receipt or the refusal. */
  submit(submission: GradientSubmission): Promise<RequestResult<GradientReceipt>>;
  /** Asks for a sync of `runId`'s model: the replica failed its hash check (docs/protocol.md, "Downlink"). */
  requestModel(runId: RunId): void;
  /** Closes the connection for good. */
  close(): void;
  /** Every frame this side sent and received so far, counted here (not the server's figure). */
  readonly traffic: WireTraffic;
}

/** Opens a worker's channel; the host of a session chooses which. */
export type ChannelFactory = (options: WorkerChannelOptions) => WorkerChannel;

/** Channels over a real socket.io connection (to the page's origin, or `socket.url`). */
export function socketChannelFactory(socket: OpenSocketOptions = {}): ChannelFactory {
  return (options) => new SocketWorkerChannel(options, openSocket(socket));
}

/** A channel over a socket the caller opened with openSocket (a headless tab that listens to it too). */
export function channelOnSocket(socket: AppSocket): ChannelFactory {
  return (options) => new SocketWorkerChannel(options, socket);
}

/** How long a join that got no answer waits before it is tried again (a cluster electing a leader answers late). */
const JOIN_RETRY_MS = 500;

/** One worker's socket: join, rejoin, submit, leave. */
class SocketWorkerChannel implements WorkerChannel {
  readonly #socket: AppSocket;
  readonly #options: WorkerChannelOptions;
  #firstJoin = true;
  /** Whether the worker wants to train; a paused one stays connected but not joined. */
  #participating = true;
  #workerId: WorkerId | null = null;
  /** Joins accepted so far: a retry is dropped when another join got through meanwhile. */
  #accepted = 0;

  constructor(options: WorkerChannelOptions, socket: AppSocket) {
    this.#options = options;
    const { listener } = options;
    this.#socket = socket;
    socket.on('connect', () => {
      listener.onLink('connected');
      // A recovered session kept its rooms and membership; otherwise say who we are again.
      if (!socket.recovered && this.#participating) void this.join();
    });
    socket.on('disconnect', () => listener.onLink('reconnecting'));
    socket.io.on('reconnect_attempt', () => listener.onLink('reconnecting'));
    socket.on('round:open', (round) => listener.onRoundOpen(round));
    socket.on('round:closed', (closed) => listener.onRoundClosed(closed));
    socket.on('metrics:round', (metrics) => listener.onMetrics(metrics));
    socket.on('worker:assigned', (assignment) => listener.onAssigned(assignment));
    socket.on('worker:removed', (notice) => {
      this.#participating = false;
      listener.onRemoved(notice.reason);
    });
    socket.on('server:error', (error: ProtocolError) => listener.onError(error));
    listener.onLink('connecting');
  }

  /** This worker's id once joined. */
  get workerId(): WorkerId | null {
    return this.#workerId;
  }

  get traffic(): WireTraffic {
    return socketMeter(this.#socket)!.traffic;
  }

  /**
   * Joins the run (first time: `?run=` or the default; after: its own run); a stale key is dropped and a new identity
   * asked for.
   */
  async join(): Promise<boolean> {
    this.#participating = true;
    const { identity, listener } = this.#options;
    const runId = this.#firstJoin ? this.#options.runId : undefined;
    const answer = await request(this.#socket, 'worker:join', {
      protocol: PROTOCOL_VERSION,
      name: this.#options.name,
      backend: this.#options.backend(),
      ...(runId === undefined ? {} : { runId }),
      ...(identity.key === null ? {} : { workerKey: identity.key }),
    });
    if (!answer.ok) {
      if (answer.error.code === 'unknown-worker' && identity.key !== null) {
        identity.forget();
        return this.join();
      }
      listener.onError(answer.error);
      // No answer in time, still connected: the server may be busy electing a leader; join again shortly.
      const joinsBefore = this.#accepted;
      if (answer.error.code === 'timeout' && this.#participating)
        setTimeout(() => {
          if (this.#participating && this.#socket.connected && this.#accepted === joinsBefore) void this.join();
        }, JOIN_RETRY_MS);
      return false;
    }
    this.#firstJoin = false;
    const accepted: JoinAccepted = answer;
    this.#accepted += 1;
    this.#workerId = accepted.workerId;
    await identity.adopt(accepted.workerKey);
    listener.onAssigned(accepted);
    return true;
  }

  /**
   * Stops participating: leaves the open round and the run's room (sent again while rate-limited); the identity stays.
   */
  leave(): void {
    this.#participating = false;
    void requestLeave(this.#socket, () => !this.#participating);
  }

  /** Sends a gradient; resolves with the receipt or the refusal. */
  async submit(submission: GradientSubmission): Promise<RequestResult<GradientReceipt>> {
    return request(this.#socket, 'gradient:submit', submission);
  }

  /**
   * Asks for a sync; the answer is a round:open (delivery `sync`), and a refusal goes to the listener as server:error.
   */
  requestModel(runId: RunId): void {
    if (this.#socket.connected) this.#socket.emit('model:request', { runId });
  }

  /** Closes the socket for good. */
  close(): void {
    this.#socket.close();
  }
}
