/**
 * A worker's round player, the one worker loop of the project: the tab's
 * session (client/session), a headless tab in Node (client/net/headlessTab.ts)
 * and a worker the server runs itself (server/simulated.ts) all play their
 * rounds with it. It keeps the trainer of the worker's assignment (rebuilt
 * when the run, slot, shard or configuration changes), takes the newest
 * round:open, brings its replica of the model to that version (or asks for a
 * sync), trains, and sends the gradient through the host's transport. The
 * host injects the trainer factory, the transport and what it reports;
 * nothing here touches a socket, the DOM or a GPU.
 */
import type { Dataset } from '../data';
import type { ModelLayout } from '../model/layout';
import { createCpuBackend } from '../model/cpu/backend';
import type { GradientSubmission, LayerStats, RoundOpen, RunId, TimeSource, WorkerAssignment } from '../protocol';
import { ModelReplica, type ReplicaOutcome } from './replica';
import { shardIndices } from './shard';
import { createWorkerRound, type StepClock, type WorkerRoundResult } from './workerRound';

/** What one trained round gives gradient:submit and the charts. */
export interface PlayedRound {
  readonly layers: Uint8Array[];
  readonly loss: number;
  readonly layerStats: LayerStats[];
  /** Forward and backward pass, ms. */
  readonly computeMs: number;
  /** Decomposition and sampling, ms. */
  readonly compressMs: number;
  /** Encoding the samples for the wire, ms. */
  readonly encodeMs: number;
  /** The clock of the three (docs/protocol.md, "Worker times"). */
  readonly clock: TimeSource;
}

/** A worker's computation for one assignment, as the round player needs it. */
export interface RoundTrainer {
  readonly layout: ModelLayout;
  /** The clock of its timings: the thread's CPU time where the host has it, else the wall clock. */
  readonly clock: StepClock;
  /** Round `version`'s gradient of model `weights`, compressed and encoded. */
  round(weights: Float32Array, version: number): Promise<PlayedRound>;
  /** Frees what the trainer holds (GPU buffers). */
  dispose(): void;
}

/** The aggregator's answer to a gradient: accepted (its counted bytes), or refused. */
export type SubmitAnswer =
  | { readonly ok: true; readonly bytes: number }
  | { readonly ok: false; readonly error: { readonly code: string; readonly message: string } };

/** How the player reaches the aggregator: a socket channel, or the run itself inside the server. */
export interface RoundTransport {
  submit(submission: GradientSubmission): Promise<SubmitAnswer>;
  /** Asks for a sync of `runId`'s model: the replica failed its hash check (docs/protocol.md, "Downlink"). */
  requestModel(runId: RunId): void;
}

/** The state of one assignment: its trainer, shard and replica. */
export interface Assigned<T extends RoundTrainer> {
  readonly key: string;
  readonly assignment: WorkerAssignment;
  /** Indices into the training split of the worker's shard. */
  readonly shard: Uint32Array;
  readonly trainer: T;
  /** The run's model as this worker keeps it (replica.ts). */
  readonly replica: ModelReplica;
}

/** What the player reports, each optional: a tab draws it, a headless host counts it. */
export interface RoundPlayerEvents<T extends RoundTrainer> {
  /** A new assignment's trainer is built. */
  assigned(here: Assigned<T>): void;
  /** Building an assignment's trainer failed. */
  assignFailed(error: unknown): void;
  /** An assignment was handled (built, kept or failed). */
  settled(): void;
  /** A round is taken: its model is being brought to the replica. */
  opened(round: RoundOpen): void;
  /** The replica could not apply the round: a sync was asked for instead. */
  resync(round: RoundOpen, here: Assigned<T>): void;
  /** The replica holds the round's model (`hash` when verified); training starts. */
  ready(round: RoundOpen, here: Assigned<T>, weights: Float32Array, hash: string | null, verified: boolean): void;
  /** The gradient is being sent. */
  uploading(round: RoundOpen): void;
  /** The aggregator answered the gradient; the player waits for this before the next round. */
  sent(
    round: RoundOpen,
    here: Assigned<T>,
    result: PlayedRound,
    answer: SubmitAnswer,
    uploadMs: number,
    weights: Float32Array,
  ): void | Promise<void>;
  /** A round threw (training, or a gradient over the server's message limit). */
  failed(round: RoundOpen, error: unknown): void;
  /** No round is being played now. */
  idle(): void;
}

/** What a host gives the player. */
export interface RoundPlayerOptions<T extends RoundTrainer> {
  /**
   * The labels of the assignment's training split: the shard choice (shard.ts) depends on them. A host that loads a
   * run's dataset on first use loads it here.
   */
  readonly labels: (assignment: WorkerAssignment) => Uint8Array | Promise<Uint8Array>;
  /** Builds the trainer of an assignment on its shard (a tab may time its backends first). */
  readonly build: (assignment: WorkerAssignment, shard: Uint32Array) => T | Promise<T>;
  readonly transport: RoundTransport;
  /** A wall-clock millisecond timer, for the upload's time (the trainer's own clock times its work). */
  readonly now: () => number;
  readonly events?: Partial<RoundPlayerEvents<T>>;
  /**
   * Brings the model to the round; `here.replica.receive` when absent. A load
   * test whose trainer resends one gradient needs no weights and skips it.
   */
  readonly receive?: (here: Assigned<T>, round: RoundOpen) => ReplicaOutcome;
  /** Trains one round; `here.trainer.round` when absent (a tab falls back to the CPU from here). */
  readonly compute?: (here: Assigned<T>, round: RoundOpen, weights: Float32Array) => Promise<PlayedRound>;
  /**
   * Called with the honest submission before it is sent (a fault test tampers
   * from here, a soak paces); false withholds it.
   */
  readonly beforeSubmit?: (round: RoundOpen, submission: GradientSubmission) => Promise<boolean | void>;
  /** Awaited after every round (the server yields a turn of its event loop so sockets are served). */
  readonly betweenRounds?: () => Promise<void>;
}

const assignmentKey = (a: WorkerAssignment) => `${a.runId}|${a.slot}|${a.shard}|${JSON.stringify(a.config)}`;

/** One worker's rounds: its assignment, the newest round waiting, and whether it takes part. */
export class RoundPlayer<T extends RoundTrainer> {
  readonly #options: RoundPlayerOptions<T>;
  #current: Assigned<T> | null = null;
  #pending: RoundOpen | null = null;
  #busy = false;
  #participating = true;
  // One assignment at a time (a calibration takes seconds); one overtaken by a newer is skipped.
  #assigning: Promise<void> = Promise.resolve();
  #latest = 0;

  constructor(options: RoundPlayerOptions<T>) {
    this.#options = options;
  }

  /** The current assignment's state, or null before the first (or after close). */
  get current(): Assigned<T> | null {
    return this.#current;
  }

  /** Whether a round is being played. */
  get busy(): boolean {
    return this.#busy;
  }

  /** Whether the worker takes part in rounds. */
  get participating(): boolean {
    return this.#participating;
  }

  /** Follows a (new) assignment: a pending round of another run is dropped; resolves once it is handled. */
  assign(assignment: WorkerAssignment): Promise<void> {
    if (this.#pending !== null && this.#pending.runId !== assignment.runId) this.#pending = null;
    const ticket = ++this.#latest;
    const events = this.#options.events;
    this.#assigning = this.#assigning.then(async () => {
      if (ticket !== this.#latest) return;
      try {
        await this.#build(assignment);
      } catch (error) {
        events?.assignFailed?.(error);
      }
      events?.settled?.();
      void this.#pump();
    });
    return this.#assigning;
  }

  /** Replaces the current trainer (the old one is disposed): a tab moving to the CPU. */
  replaceTrainer(make: (here: Assigned<T>) => T): void {
    const here = this.#current;
    if (here === null) return;
    here.trainer.dispose();
    this.#current = { ...here, key: '', trainer: make(here) };
  }

  /** A round:open: it replaces any round still waiting, and is played once the player is free. */
  open(round: RoundOpen): void {
    if (!this.#participating) return;
    this.#pending = round;
    void this.#pump();
  }

  /** Stops taking part: the waiting round is dropped, a round being trained is not sent. */
  pause(): void {
    this.#participating = false;
    this.#pending = null;
  }

  /** Takes part again. */
  resume(): void {
    this.#participating = true;
  }

  /** Stops for good and frees the trainer. */
  close(): void {
    this.pause();
    this.#current?.trainer.dispose();
    this.#current = null;
  }

  async #build(assignment: WorkerAssignment): Promise<void> {
    const key = assignmentKey(assignment);
    if (this.#current?.key === key) return;
    this.#current?.trainer.dispose();
    this.#current = null;
    const { config } = assignment;
    const shard = shardIndices(await this.#options.labels(assignment), config, assignment.shard);
    const trainer = await this.#options.build(assignment, shard);
    this.#current = { key, assignment, shard, trainer, replica: new ModelReplica(trainer.layout) };
    this.#options.events?.assigned?.(this.#current);
  }

  async #pump(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    const events = this.#options.events;
    try {
      // The server may open a round before the join's answer arrives: such a round waits here for its assignment.
      while (this.#pending !== null && this.#current !== null && this.#participating) {
        const round = this.#pending;
        const here = this.#current;
        if (round.runId !== here.assignment.runId) break;
        this.#pending = null;
        try {
          await this.#play(round, here);
        } catch (error) {
          events?.failed?.(round, error);
        }
        await this.#options.betweenRounds?.();
      }
    } finally {
      this.#busy = false;
      events?.idle?.();
    }
  }

  async #play(round: RoundOpen, here: Assigned<T>): Promise<void> {
    const { events, transport, now } = this.#options;
    events?.opened?.(round);
    const received = here.trainer.clock.now();
    // The replica applies a relayed or compressed update with the server's own function, and checks its hash.
    const outcome = this.#options.receive?.(here, round) ?? here.replica.receive(round, here.assignment.config);
    if (outcome.kind === 'resync') {
      events?.resync?.(round, here);
      transport.requestModel(round.runId);
      return;
    }
    const { weights } = outcome;
    const applyMs = here.trainer.clock.now() - received;
    events?.ready?.(round, here, weights, outcome.hash, outcome.verified);
    const result = await (this.#options.compute?.(here, round, weights) ?? here.trainer.round(weights, round.version));
    const active = this.#current ?? here;
    if (!this.#participating) return;
    const submission: GradientSubmission = {
      runId: round.runId,
      workerId: active.assignment.workerId,
      version: round.version,
      layers: result.layers,
      loss: result.loss,
      layerStats: result.layerStats,
      // The replica's update is this worker's work too: it counts toward the round's time.
      computeMs: result.computeMs + result.compressMs + result.encodeMs + applyMs,
      times: { compressMs: result.compressMs, encodeMs: result.encodeMs, applyMs, clock: result.clock },
    };
    // socket.io would drop the connection on an oversized message without saying why: check first.
    const bytes = result.layers.reduce((sum, layer) => sum + layer.byteLength, 0);
    if (bytes > active.assignment.maxMessageBytes)
      throw new Error(
        `a gradient of ${bytes} bytes exceeds the server's limit of ${active.assignment.maxMessageBytes}`,
      );
    if ((await this.#options.beforeSubmit?.(round, submission)) === false) return;
    events?.uploading?.(round);
    const sentAt = now();
    const answer = await transport.submit(submission);
    await events?.sent?.(round, active, result, answer, now() - sentAt, weights);
  }
}

/** What the player needs of a worker round's result: its bytes, loss, statistics and times. */
export function playedRound(r: WorkerRoundResult): PlayedRound {
  const { layers, loss, layerStats, computeMs, compressMs, encodeMs, clock } = r;
  return { layers, loss, layerStats, computeMs, compressMs, encodeMs, clock };
}

/** The worker round on the CPU backend for an assignment (a headless tab's, a server-run worker's). */
export function cpuRoundTrainer(
  assignment: WorkerAssignment,
  train: Dataset,
  shard: Uint32Array,
  layout: ModelLayout,
  clock: StepClock,
): RoundTrainer {
  const { config } = assignment;
  const round = createWorkerRound({
    backend: createCpuBackend(layout),
    layout,
    compression: config,
    batchSize: config.batchSize,
    seed: config.seed,
    worker: assignment.slot,
    train,
    shard,
    clock,
  });
  return {
    layout,
    clock,
    round: async (weights, version) => playedRound(await round(weights, version)),
    dispose: () => {},
  };
}
