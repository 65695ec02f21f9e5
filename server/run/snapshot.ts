/**
 * The shapes a run is read in: the summary dashboards show, and the snapshot
 * a checkpoint stores, from which the run is rebuilt exactly.
 */
import type { ModelVersion, RoundMetrics, RunConfig, RunId, RunStatus, RunSummary } from '../../core/protocol';
import type { Downlink } from './downlink';
import type { MemberRecord, Members } from './members';
import type { OpenRound } from './round';
import type { RunTraffic } from './traffic';

/**
 * Everything a checkpoint stores; enough to rebuild the run exactly: the
 * summary's own fields (traffic absent in checkpoints written before frames
 * were counted), the weights and momentum, the history and the members.
 */
export interface RunSnapshot
  extends
    Pick<RunSummary, 'runId' | 'config' | 'status' | 'version' | 'bytesUp' | 'bytesDown'>,
    Partial<Pick<RunSummary, 'traffic'>> {
  readonly params: Float32Array;
  readonly velocity: Float32Array;
  readonly history: readonly RoundMetrics[];
  readonly members: readonly MemberRecord[];
}

/** A run's state, which the Run, its round machine (machine.ts), its summary and its snapshot share. */
export interface RunCore {
  readonly runId: RunId;
  config: RunConfig;
  status: RunStatus;
  version: ModelVersion;
  params: Float32Array;
  velocity: Float32Array;
  history: RoundMetrics[];
  readonly members: Members;
  readonly traffic: RunTraffic;
  readonly downlink: Downlink;
  round: OpenRound | null;
  /** Why the server paused the run itself; cleared by start, resume and reset. */
  fault: string | null;
}

/** The state dashboards show. */
export function summarize(state: RunCore): RunSummary {
  const { round, traffic } = state;
  return {
    runId: state.runId,
    config: state.config,
    status: state.status,
    version: state.version,
    workers: [...state.members.values()].map((m) => ({
      workerId: m.workerId,
      name: m.profile.name,
      backend: m.profile.backend,
      slot: m.slot,
      connected: m.connected,
      bytesUp: m.bytesUp,
      bytesDown: m.bytesDown,
      traffic: m.traffic,
      rounds: m.rounds,
      lastSeenAt: m.lastSeenAt,
      latencyMs: m.latencyMs,
      attack: m.attack,
      simulated: m.profile.simulated,
    })),
    round:
      round === null
        ? null
        : {
            version: round.version,
            openedAt: round.openedAt,
            deadline: round.deadline,
            participants: [...round.participants],
            received: round.orderedContributors(),
          },
    bytesUp: traffic.bytesUp,
    bytesDown: traffic.bytesDown,
    traffic: traffic.traffic,
    fault: state.fault,
  };
}

/** A consistent copy of the persistent state, taken at a round boundary. */
export function snapshotOf(state: RunCore): RunSnapshot {
  const { traffic } = state;
  return {
    runId: state.runId,
    config: state.config,
    status: state.status,
    version: state.version,
    params: state.params.slice(),
    velocity: state.velocity.slice(),
    // A copy: the store encodes it later (server/persistence/checkpoint.ts), by when more rounds may have closed.
    history: state.history.slice(),
    // Named fields, not a rest spread: the profile and timings live only while the server does.
    members: [...state.members.values()].map(({ workerId, slot, bytesUp, bytesDown, traffic, rounds }) => ({
      workerId,
      slot,
      bytesUp,
      bytesDown,
      traffic,
      rounds,
    })),
    bytesUp: traffic.bytesUp,
    bytesDown: traffic.bytesDown,
    traffic: traffic.traffic,
  };
}
