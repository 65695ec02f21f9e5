/**
 * A worker from start to finish: picks the backend, loads the digits,
 * claims an identity, opens its channel, and plays every round:open with the
 * project's round player (core/training/roundPlayer.ts), reporting to its
 * sink. Nothing here touches the DOM, the page or a socket: the host passes
 * in the backend, the data, the identity store and the channel factory, so
 * the same session runs in a tab's Web Worker (browserSession.ts) and in a
 * Node worker thread (`npm run swarm`). Where it trains is backendChoice.ts's;
 * what it shows of each round, roundReports.ts's.
 */
import { DEFAULT_DATASET, type DatasetName, type MnistData } from '../../core/data';
import type { GradientSubmission, RoundOpen, RunId, WorkerAssignment } from '../../core/protocol';
import { RoundPlayer } from '../../core/training/roundPlayer';
import type { StepClock } from '../../core/training/workerRound';
import type { Backend } from '../gpu/runtime/device';
import { linkedChannelFactory } from '../net/linkChannel';
import type { ChannelFactory, WorkerChannel } from '../net/workerChannel';
import type { IdentityStore } from '../net/workerIdentity';
import type { WorkerActions, WorkerPhase } from '../ui/store/workerStore';
import { BackendChoice, errorText } from './backendChoice';
import { ROUND_RACES, roundReports } from './roundReports';
import { createTrainer, type Trainer, type TrainerRound } from './trainer';

/** What the page can ask of the session. */
export interface WorkerControls {
  /** Stop taking part in rounds (the identity and the charts stay). */
  pause(): void;
  /** Take part again (or join again after being removed). */
  resume(): void;
}

/** A running session: its controls, and the way to end it. */
export interface WorkerSession extends WorkerControls {
  /** Closes the channel and frees the trainer. */
  close(): void;
}

/**
 * Where the session reports: the worker store's actions in a tab, a message port from a Web Worker, counters headless.
 */
export type WorkerSessionSink = WorkerActions;

/** A sink that records nothing: headless hosts spread it and override what they count. */
export function quietSink(): WorkerSessionSink {
  const nothing = () => {};
  return {
    setLink: nothing,
    setBackend: nothing,
    setCalibration: nothing,
    setPhase: nothing,
    assigned: nothing,
    roundOpened: nothing,
    runEvaluated: nothing,
    roundSent: nothing,
    setDigits: nothing,
    setNotice: nothing,
    setTraffic: nothing,
  };
}

/** Everything a host injects into a session. */
export interface WorkerSessionDeps {
  readonly sink: WorkerSessionSink;
  /** Picks the compute backend (chooseBackend in a tab, a Dawn device or the CPU in Node). */
  readonly backend: () => Promise<Backend>;
  /**
   * With a WebGPU backend, time a few rounds on it and on the CPU for each
   * new model and compression setting, and train on the faster
   * (calibration.ts); off by default. A tab calibrates unless `?webgpu`
   * forces WebGPU.
   */
  readonly calibrate?: boolean;
  /**
   * Loads a dataset's training images (fetch in a tab, the file system in Node): MNIST at the start, another the first
   * time a run assigns it.
   */
  readonly loadData: (dataset: DatasetName) => Promise<MnistData>;
  /** The worker's identity store (claimWorkerIdentity in a tab, memoryIdentity headless). */
  readonly identity: () => Promise<IdentityStore>;
  /** Opens the connection to the aggregator. */
  readonly openChannel: ChannelFactory;
  /** A name the teacher sees (at most 40 characters). */
  readonly name: string;
  /** Run to join first (`?run=`); the default run when absent. */
  readonly runId?: RunId;
  /** Predict the shown digits after every round (a tab shows them; headless workers skip the work). */
  readonly showDigits?: boolean;
  /**
   * Wait out the run's simulated link (RunConfig.link) before a message counts
   * as delivered; true by default. The swarm turns it off and computes the
   * same time model from measured times instead of sleeping.
   */
  readonly simulateLink?: boolean;
  /**
   * The clock of a CPU trainer's timings (docs/protocol.md, "Worker times"): the wall clock by default (all a tab
   * has); a Node thread passes its own CPU clock.
   */
  readonly cpuClock?: StepClock;
  /** Called with the honest submission before it is sent (core/training/roundPlayer.ts); false withholds it. */
  readonly beforeSubmit?: (round: RoundOpen, submission: GradientSubmission) => Promise<boolean | void>;
}

/** Starts a worker session with what its host injects. */
export async function runWorkerSession(deps: WorkerSessionDeps): Promise<WorkerSession> {
  const { sink, runId } = deps;
  let phase: WorkerPhase = 'starting';
  const setPhase = (next: WorkerPhase) => {
    phase = next;
    sink.setPhase(next);
  };
  setPhase('starting');
  let player: RoundPlayer<Trainer> | null = null;
  const backend = new BackendChoice(
    await deps.backend(),
    {
      sink,
      setPhase,
      movedToCpu: (device) =>
        player?.replaceTrainer((here) =>
          createTrainer({
            device,
            config: here.assignment.config,
            slot: here.assignment.slot,
            train: dataOf(here.assignment).train,
            shard: here.shard,
          }),
        ),
    },
    deps.calibrate === true,
  );

  let data: MnistData;
  try {
    data = await deps.loadData(DEFAULT_DATASET);
  } catch (error) {
    setPhase('failed');
    sink.setNotice({ key: 'worker.notice.digitsFailed', params: { detail: errorText(error) } });
    return { pause() {}, resume() {}, close() {} };
  }
  // Each dataset is loaded once, when a run first needs it (the player asks for its labels before building).
  const datasets = new Map<DatasetName, MnistData>([[DEFAULT_DATASET, data]]);
  const dataOf = (assignment: WorkerAssignment): MnistData => datasets.get(assignment.config.dataset) ?? data;
  const loadedLabels = async (assignment: WorkerAssignment): Promise<Uint8Array> => {
    const { dataset } = assignment.config;
    if (!datasets.has(dataset)) {
      try {
        datasets.set(dataset, await deps.loadData(dataset));
      } catch (error) {
        sink.setNotice({ key: 'worker.notice.digitsFailed', params: { detail: errorText(error) } });
        throw error;
      }
    }
    return dataOf(assignment).train.labels;
  };

  let channel: WorkerChannel | null = null;
  const reports = roundReports({
    sink,
    setPhase,
    showDigits: deps.showDigits ?? true,
    trainOf: (assignment) => dataOf(assignment).train,
    traffic: () => channel!.traffic,
  });
  // The join said where this worker computes before it had timed it: a rejoin tells the teacher's table the times
  // and the choice.
  let reported = backend.view;
  const rounds: RoundPlayer<Trainer> = new RoundPlayer<Trainer>({
    labels: loadedLabels,
    build: (assignment, shard) => {
      reported = backend.view;
      return backend.trainer({
        config: assignment.config,
        slot: assignment.slot,
        train: dataOf(assignment).train,
        shard,
        ...(deps.cpuClock === undefined ? {} : { cpuClock: deps.cpuClock }),
      });
    },
    transport: {
      submit: async (submission) => {
        const answer = await channel!.submit(submission);
        return answer.ok ? { ok: true, bytes: answer.bytes } : answer;
      },
      requestModel: (id) => channel!.requestModel(id),
    },
    now: () => performance.now(),
    events: {
      ...reports,
      assigned: (here) => {
        reports.assigned?.(here);
        if (backend.view !== reported && rounds.participating) void channel!.join();
      },
      assignFailed: (error) => sink.setNotice({ key: 'common.raw', params: { detail: errorText(error) } }),
      settled: () => {
        if (rounds.participating && !rounds.busy && phase !== 'removed') setPhase('waiting');
      },
      idle: () => {
        if (rounds.participating && phase !== 'removed' && phase !== 'failed' && phase !== 'calibrating')
          setPhase('waiting');
      },
    },
    compute: async (here, round, weights): Promise<TrainerRound> => {
      try {
        return await here.trainer.round(weights, round.version);
      } catch (error) {
        if (here.trainer.kind !== 'webgpu') throw error;
        backend.fallBackToCpu('failed', errorText(error));
        return rounds.current!.trainer.round(weights, round.version);
      }
    },
    ...(deps.beforeSubmit === undefined ? {} : { beforeSubmit: deps.beforeSubmit }),
  });
  player = rounds;

  const identity = await deps.identity();
  setPhase('joining');
  const openChannel =
    deps.simulateLink === false
      ? deps.openChannel
      : linkedChannelFactory(deps.openChannel, () => rounds.current?.assignment.config.link ?? null);
  channel = openChannel({
    identity,
    name: deps.name,
    // Read at every join, so a worker that fell back to the CPU says so when it next rejoins.
    backend: () => backend.view,
    ...(runId === undefined ? {} : { runId }),
    listener: {
      onLink: (link) => sink.setLink(link),
      onAssigned: (assignment) => {
        sink.assigned(assignment);
        void rounds.assign(assignment);
      },
      onRoundOpen: (round) => rounds.open(round),
      onRoundClosed: () => {},
      onMetrics: (metrics) => {
        if (metrics.runId === rounds.current?.assignment.runId) reports.metrics(metrics);
      },
      onRemoved: (reason) => {
        rounds.pause();
        setPhase('removed');
        sink.setNotice({ key: 'worker.notice.removed', params: { detail: reason } });
      },
      onError: (error) => {
        if (ROUND_RACES.has(error.code)) return;
        if (error.code === 'too-many-workers') return sink.setNotice({ key: 'worker.notice.tooManyWorkers' });
        sink.setNotice({ key: 'common.raw', params: { detail: error.message } });
      },
    },
  });
  const joined = channel;

  return {
    pause() {
      rounds.pause();
      joined.leave();
      setPhase('paused');
    },
    resume() {
      rounds.resume();
      sink.setNotice(null);
      setPhase('joining');
      void joined.join().then((ok) => {
        if (ok && !rounds.busy) setPhase('waiting');
      });
    },
    close() {
      rounds.close();
      joined.close();
    },
  };
}
