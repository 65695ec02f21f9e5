/**
 * A worker tab without the page, in Node: the tab's own channel
 * (workerChannel.ts: join, rejoin after a reconnect the server could not
 * recover, follow worker:assigned) and the tab's round player
 * (core/training/roundPlayer.ts) on the CPU backend. The server's tests and
 * the load and soak benchmarks run many in one process; the swarm runs the
 * whole tab session in worker threads instead (scripts/swarm/workerThread.ts).
 * Its socket is public: a test listens to it, or sends a raw message on it.
 */
import type { Dataset } from '../../core/data';
import { createModelLayout } from '../../core/model/layout';
import type {
  GradientSubmission,
  JoinAccepted,
  ProtocolError,
  RoundOpen,
  RunId,
  WorkerAssignment,
  WorkerBackend,
  WorkerKey,
} from '../../core/protocol';
import {
  RoundPlayer,
  cpuRoundTrainer,
  type PlayedRound,
  type RoundTrainer,
  type SubmitAnswer,
} from '../../core/training/roundPlayer';
import { WALL_CLOCK } from '../../core/training/workerRound';
import { openSocket, type AppSocket } from './socket';
import { channelOnSocket, type WorkerChannel } from './workerChannel';
import { memoryIdentity, type IdentityStore } from './workerIdentity';

/** Options of a headless tab. */
export interface HeadlessTabOptions {
  readonly url: string;
  /** The training split (shared by every headless tab of a process). */
  readonly train: Dataset;
  readonly runId?: RunId;
  /** The key to rejoin as (a tab that comes back). */
  readonly workerKey?: WorkerKey;
  /** The name the teacher sees; the server names it by its id when absent. */
  readonly name?: string;
  /** Where it says it computes, for the teacher's workers table. */
  readonly backend?: WorkerBackend;
  /**
   * Called with the honest submission before it is sent; fault tests send
   * bad messages from here. Return false to skip the honest one.
   */
  readonly beforeSubmit?: (
    tab: HeadlessTab,
    round: RoundOpen,
    submission: GradientSubmission,
  ) => Promise<boolean | void>;
  /**
   * Load tests: compute one honest gradient, then resend its layers for every
   * later version, so the process measures the aggregator rather than the
   * workers' arithmetic.
   */
  readonly reuseGradient?: boolean;
}

const HEADLESS_BACKEND: WorkerBackend = { kind: 'cpu', detail: 'headless tab in Node' };

/** What a tab that resends one gradient trains on after its first round: nothing. */
const NO_WEIGHTS = { kind: 'ready', weights: new Float32Array(0), verified: false, hash: null } as const;

/** A trainer that computes its first round and answers every later one with the same result. */
function reusing(trainer: RoundTrainer): RoundTrainer {
  let first: Promise<PlayedRound> | null = null;
  return {
    layout: trainer.layout,
    clock: trainer.clock,
    round: (weights, version) => (first ??= trainer.round(weights, version)),
    dispose: () => trainer.dispose(),
  };
}

/** One headless tab. */
export class HeadlessTab {
  readonly socket: AppSocket;
  /** Every server:error the socket received. */
  readonly errors: ProtocolError[] = [];
  /** Versions whose gradient the server accepted. */
  readonly accepted: number[] = [];
  /** Connections lost while joined, and how many of the reconnections the server recovered. */
  disconnects = 0;
  recoveries = 0;
  assignment: WorkerAssignment | null = null;
  readonly #options: HeadlessTabOptions;
  readonly #identity: IdentityStore;
  readonly #player: RoundPlayer<RoundTrainer>;
  #channel: WorkerChannel | null = null;
  #joined = false;
  /** The start() waiting for the first join's answer. */
  #starting: { resolve: (accepted: JoinAccepted) => void; reject: (error: Error) => void } | null = null;

  constructor(options: HeadlessTabOptions) {
    this.#options = options;
    this.#identity = memoryIdentity(options.workerKey ?? null);
    this.socket = openSocket({
      url: options.url,
      autoConnect: false,
      reconnectionDelayMs: 100,
      reconnectionDelayMaxMs: 500,
    });
    this.socket.on('server:error', (error) => this.errors.push(error));
    this.socket.on('disconnect', () => {
      if (this.#joined) this.disconnects += 1;
    });
    this.socket.on('connect', () => {
      if (this.#joined && this.socket.recovered) this.recoveries += 1;
    });
    const { train } = options;
    const now = () => performance.now();
    const fed = new WeakSet<RoundTrainer>();
    this.#player = new RoundPlayer<RoundTrainer>({
      labels: () => train.labels,
      build: (assignment, shard) => {
        const layout = createModelLayout(assignment.config.model);
        // Many headless tabs share one thread: only the wall clock is theirs alone.
        const trainer = cpuRoundTrainer(assignment, train, shard, layout, WALL_CLOCK);
        return options.reuseGradient === true ? reusing(trainer) : trainer;
      },
      transport: {
        submit: async (submission): Promise<SubmitAnswer> => {
          const answer = await this.#channel!.submit(submission);
          return answer.ok ? { ok: true, bytes: answer.bytes } : answer;
        },
        requestModel: (runId) => this.#channel?.requestModel(runId),
      },
      now,
      events: {
        sent: (round, _here, _result, answer) => {
          if (answer.ok) this.accepted.push(round.version);
        },
      },
      // A resent gradient needs no weights: after the first, the model is not decoded (the aggregator is what a load
      // test measures).
      ...(options.reuseGradient === true
        ? {
            receive: (here, round) => {
              if (fed.has(here.trainer)) return NO_WEIGHTS;
              const outcome = here.replica.receive(round, here.assignment.config);
              if (outcome.kind === 'ready') fed.add(here.trainer);
              return outcome;
            },
          }
        : {}),
      ...(options.beforeSubmit === undefined
        ? {}
        : { beforeSubmit: (round, submission) => options.beforeSubmit!(this, round, submission) }),
    });
  }

  /** The key the server issued (or the one it was started with). */
  get workerKey(): WorkerKey | undefined {
    return this.#identity.key ?? undefined;
  }

  /** Connects and joins; resolves with the server's answer, rejects with its refusal. */
  start(): Promise<JoinAccepted> {
    const answered = new Promise<JoinAccepted>((resolve, reject) => (this.#starting = { resolve, reject }));
    this.#player.resume();
    if (this.#channel === null) this.#channel = this.#openChannel();
    if (this.socket.connected) void this.#channel.join();
    else this.socket.connect();
    return answered;
  }

  /** Disconnects for good. */
  stop(): void {
    this.#joined = false;
    this.#player.close();
    if (this.#channel === null) this.socket.disconnect();
    else this.#channel.close();
  }

  #openChannel(): WorkerChannel {
    const { runId, name, backend } = this.#options;
    return channelOnSocket(this.socket)({
      identity: this.#identity,
      name: name ?? '',
      backend: () => backend ?? HEADLESS_BACKEND,
      ...(runId === undefined ? {} : { runId }),
      listener: {
        onLink: () => {},
        onAssigned: (assignment) => {
          this.assignment = assignment;
          this.#joined = true;
          this.#starting?.resolve({ ...assignment, workerKey: this.#identity.key! });
          this.#starting = null;
          void this.#player.assign(assignment);
        },
        onRoundOpen: (round) => this.#player.open(round),
        onRoundClosed: () => {},
        onMetrics: () => {},
        onRemoved: () => this.#player.pause(),
        onError: (error) => {
          if (error.event !== 'worker:join' || this.#starting === null) return;
          this.#starting.reject(new Error(`join refused: ${error.code}: ${error.message}`));
          this.#starting = null;
        },
      },
    });
  }
}
