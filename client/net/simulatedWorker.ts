/**
 * A worker tab without the tab, in Node: a socket, core/training's worker
 * round and the CPU backend. The server's tests and the load benchmark run
 * many in one process (the swarm runs the tab's own session code instead).
 * It behaves as the browser worker will: join (or rejoin with its key), train
 * each round:open it receives, follow worker:assigned, rejoin after a
 * reconnect the server could not recover.
 */
import { io } from 'socket.io-client';
import type { Dataset, Shards } from '../../core/data';
import { shardDirichlet, shardIid } from '../../core/data';
import { createCpuBackend } from '../../core/model/cpu/backend';
import { createModelLayout, type ModelLayout } from '../../core/model/layout';
import {
  PROTOCOL_VERSION,
  type Ack,
  type GradientSubmission,
  type JoinAccepted,
  type ProtocolError,
  type RoundOpen,
  type RunId,
  type WorkerAssignment,
  type WorkerBackend,
  type WorkerKey,
} from '../../core/protocol';
import { ModelReplica } from '../../core/training/replica';
import { createWorkerRound, type WorkerRoundResult } from '../../core/training/workerRound';
import { resendWhileRateLimited, type AppSocket } from './socket';

/** Options of a simulated worker. */
export interface SimulatedWorkerOptions {
  readonly url: string;
  /** The training split (shared by every simulated worker of a process). */
  readonly train: Dataset;
  readonly runId?: RunId;
  readonly workerKey?: WorkerKey;
  readonly name?: string;
  /** Where it computes, for the teacher's workers table (the headless swarm says cpu or webgpu). */
  readonly backend?: WorkerBackend;
  /**
   * Called with the honest submission before it is sent; fault tests send
   * bad messages from here. Return false to skip the honest one.
   */
  readonly beforeSubmit?: (
    worker: SimulatedWorker,
    round: RoundOpen,
    submission: GradientSubmission,
  ) => Promise<boolean | void>;
  /** Timeout of a gradient's acknowledgement (ms). */
  readonly ackTimeoutMs?: number;
  /**
   * Load tests: compute one honest gradient, then resend its layers for every
   * later version, so the process measures the aggregator rather than the
   * workers' arithmetic.
   */
  readonly reuseGradient?: boolean;
  /**
   * Builds the worker's round function for an assignment; the worker round
   * on the CPU backend when absent. The headless swarm passes a WebGPU
   * worker round here, so every backend speaks the same protocol code.
   */
  readonly createStep?: (context: StepContext) => SubmissionStep;
}

/** What a round function needs to know about its worker. */
export interface StepContext {
  readonly assignment: WorkerAssignment;
  readonly layout: ModelLayout;
  /** Indices into the training split of the worker's shard. */
  readonly shard: Uint32Array;
}

/** A round function: weights of version v → the parts of gradient:submit it computes. */
export type SubmissionStep = (
  weights: Float32Array,
  version: number,
) => Promise<Pick<WorkerRoundResult, 'layers' | 'loss' | 'layerStats'>>;

/** Every shard of a split, cached: each simulated worker would otherwise recompute the permutation. */
const shardCache = new Map<string, Shards>();

function shardsFor(train: Dataset, assignment: WorkerAssignment): Uint32Array {
  const { split, shards, seed } = assignment.config;
  const key = `${JSON.stringify(split)}/${shards}/${seed}/${train.count}`;
  let all = shardCache.get(key);
  if (!all) {
    all =
      split.kind === 'iid'
        ? shardIid(train.labels, shards, seed)
        : shardDirichlet(train.labels, shards, split.alpha, seed);
    shardCache.set(key, all);
  }
  return all[assignment.shard]!;
}

/** One simulated worker. */
export class SimulatedWorker {
  readonly socket: AppSocket;
  readonly errors: ProtocolError[] = [];
  /** Versions whose gradient the server accepted. */
  readonly accepted: number[] = [];
  /** Connections lost while joined, and how many of the reconnections the server recovered. */
  disconnects = 0;
  recoveries = 0;
  assignment: WorkerAssignment | null = null;
  workerKey: WorkerKey | undefined;
  #step: { assignment: WorkerAssignment; layout: ModelLayout; step: SubmissionStep; replica: ModelReplica } | null =
    null;
  #pending: RoundOpen | null = null;
  #reused: GradientSubmission | null = null;
  #busy = false;
  #joined = false;
  readonly #options: SimulatedWorkerOptions;

  constructor(options: SimulatedWorkerOptions) {
    this.#options = options;
    this.workerKey = options.workerKey;
    this.socket = io(options.url, {
      transports: ['websocket'],
      autoConnect: false,
      reconnectionDelay: 100,
      reconnectionDelayMax: 500,
    });
    this.socket.on('server:error', (error) => this.errors.push(error));
    this.socket.on('round:open', (round) => this.#enqueue(round));
    this.socket.on('worker:assigned', (assignment) => {
      this.assignment = assignment;
    });
    this.socket.on('disconnect', () => {
      if (this.#joined) this.disconnects += 1;
    });
    this.socket.on('connect', () => {
      if (this.#joined && this.socket.recovered) this.recoveries += 1;
      // A connection the server could not recover: join again as the same worker, until it is accepted
      // (a cluster electing a new leader answers only once it has one).
      if (this.#joined && !this.socket.recovered) this.#rejoin();
    });
  }

  /** Connects and joins; resolves with the server's answer. */
  async start(): Promise<JoinAccepted> {
    this.socket.connect();
    return this.join();
  }

  /** worker:join with the stored key (if any). */
  async join(): Promise<JoinAccepted> {
    const request = {
      protocol: PROTOCOL_VERSION,
      ...(this.#options.runId === undefined ? {} : { runId: this.#options.runId }),
      ...(this.workerKey === undefined ? {} : { workerKey: this.workerKey }),
      ...(this.#options.name === undefined ? {} : { name: this.#options.name }),
      ...(this.#options.backend === undefined ? {} : { backend: this.#options.backend }),
    };
    const response = await this.socket.timeout(60_000).emitWithAck('worker:join', request);
    if (!response.ok) throw new Error(`join refused: ${response.error.code}: ${response.error.message}`);
    this.assignment = response;
    this.workerKey = response.workerKey;
    this.#joined = true;
    return response;
  }

  #rejoin(): void {
    if (!this.#joined || !this.socket.connected) return;
    this.join().catch(() => setTimeout(() => this.#rejoin(), 500));
  }

  /** Disconnects for good. */
  stop(): void {
    this.#joined = false;
    this.socket.disconnect();
  }

  /**
   * Computes the honest submission for a round (also used by tests that
   * tamper with it); null when its replica failed the hash check and it
   * asked for a sync instead (a compressed downlink, docs/protocol.md).
   */
  async compute(round: RoundOpen): Promise<GradientSubmission | null> {
    const assignment = this.assignment;
    if (!assignment) throw new Error('not joined');
    if (this.#options.reuseGradient && this.#reused?.runId === round.runId)
      return { ...this.#reused, version: round.version };
    const { step, replica } = this.#stepFor(assignment);
    const outcome = replica.receive(round, assignment.config);
    if (outcome.kind === 'resync') {
      this.socket.emit('model:request', { runId: round.runId });
      return null;
    }
    const { weights } = outcome;
    const started = performance.now();
    const result = await step(weights, round.version);
    const submission: GradientSubmission = {
      runId: assignment.runId,
      workerId: assignment.workerId,
      version: round.version,
      layers: result.layers,
      loss: result.loss,
      layerStats: result.layerStats,
      computeMs: performance.now() - started,
    };
    if (this.#options.reuseGradient) this.#reused = submission;
    return submission;
  }

  /**
   * Sends a submission and waits for its acknowledgement (sent again while the server refuses it for its rate, as the
   * tab's).
   */
  async submit(submission: GradientSubmission): Promise<Ack> {
    const timeoutMs = this.#options.ackTimeoutMs ?? 30_000;
    return resendWhileRateLimited(
      () => this.socket.timeout(timeoutMs).emitWithAck('gradient:submit', submission),
      timeoutMs,
    );
  }

  #stepFor(assignment: WorkerAssignment): { step: SubmissionStep; layout: ModelLayout; replica: ModelReplica } {
    if (this.#step?.assignment !== assignment) {
      const { config } = assignment;
      const layout = createModelLayout(config.model);
      const shard = shardsFor(this.#options.train, assignment);
      const step =
        this.#options.createStep?.({ assignment, layout, shard }) ??
        createWorkerRound({
          backend: createCpuBackend(layout),
          layout,
          compression: config,
          batchSize: config.batchSize,
          seed: config.seed,
          worker: assignment.slot,
          train: this.#options.train,
          shard,
        });
      this.#step = { assignment, layout, step, replica: new ModelReplica(layout) };
    }
    return this.#step;
  }

  #enqueue(round: RoundOpen): void {
    this.#pending = round; // only the newest round matters
    if (!this.#busy) void this.#drain();
  }

  async #drain(): Promise<void> {
    this.#busy = true;
    try {
      while (this.#pending) {
        const round = this.#pending;
        this.#pending = null;
        if (round.runId !== this.assignment?.runId) continue;
        const submission = await this.compute(round);
        if (submission === null) continue;
        const proceed = await this.#options.beforeSubmit?.(this, round, submission);
        if (proceed === false) continue;
        // socket.io would drop the connection on an oversized message without saying why: check first.
        const bytes = submission.layers.reduce((sum: number, layer) => sum + layer.byteLength, 0);
        if (bytes > (this.assignment?.maxMessageBytes ?? Infinity))
          throw new Error(`gradient of ${bytes} bytes exceeds the server's limit`);
        const ack = await this.submit(submission).catch(() => null);
        if (ack?.ok) this.accepted.push(round.version);
      }
    } finally {
      this.#busy = false;
    }
  }
}
