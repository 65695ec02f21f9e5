/**
 * Who is in a run: each member's record and live state, the slots they hold,
 * who a round waits for (dormancy) and, after a restart, who is expected back.
 */
import type { RunConfig, WorkerBackend, WorkerId } from '../../core/protocol';
import type { WorkerAttack } from '../../core/schema';
import { NO_TRAFFIC, type WireTraffic } from '../../core/traffic/frames';
import type { Scheduler } from './runDeps';

/** The part of a worker's membership that a checkpoint keeps. */
export interface MemberRecord {
  readonly workerId: WorkerId;
  readonly slot: number;
  bytesUp: number;
  bytesDown: number;
  /** Its socket's frames while in this run (core/traffic); absent in checkpoints written before frames were counted. */
  traffic?: WireTraffic;
  rounds: number;
}

/** How a worker presents itself (kept by its identity; the run copies it for its summaries). */
export interface WorkerProfile {
  readonly name: string;
  readonly backend: WorkerBackend | null;
  /** Simulated by the server (server/run/simulated.ts), started from the dashboard. */
  readonly simulated: boolean;
}

/** A worker's membership of a run: the checkpointed record plus what only lives while the server does. */
export interface Member extends MemberRecord {
  traffic: WireTraffic;
  connected: boolean;
  profile: WorkerProfile;
  /** Server clock of its last join or accepted gradient. */
  lastSeenAt: number | null;
  /** round:open to the arrival of its last accepted gradient, in ms. */
  latencyMs: number | null;
  /** Rounds in a row it was asked to and did not contribute to (not checkpointed). */
  missed: number;
  /** The classroom attack applied to its estimates (set by the teacher; not checkpointed). */
  attack: WorkerAttack | null;
  /**
   * The version whose weights and momentum its replica holds, as far as the
   * server knows (a compressed downlink sends it updates from there), or
   * null: it gets a sync next. Reset on join, rejoin and disconnect.
   */
  replicaVersion: number | null;
}

/** The members of a run, by worker. */
export type Members = Map<WorkerId, Member>;

/** The profile of a worker whose identity told the run nothing (yet). */
export function defaultProfile(workerId: WorkerId): WorkerProfile {
  return { name: `worker ${workerId}`, backend: null, simulated: false };
}

/** The members of a checkpoint, disconnected and with default profiles until their workers come back. */
export function restoreMembers(records: readonly MemberRecord[]): Members {
  const members: Members = new Map();
  for (const m of records)
    members.set(m.workerId, {
      ...m,
      traffic: m.traffic ?? NO_TRAFFIC,
      connected: false,
      profile: defaultProfile(m.workerId),
      lastSeenAt: null,
      latencyMs: null,
      attack: null,
      missed: 0,
      replicaVersion: null,
    });
  return members;
}

/** Adds a new member in the lowest free slot. */
export function addNewMember(members: Members, workerId: WorkerId, profile: WorkerProfile | undefined): Member {
  const used = new Set([...members.values()].map((m) => m.slot));
  let slot = 0;
  while (used.has(slot)) slot++;
  const member: Member = {
    workerId,
    slot,
    connected: false,
    bytesUp: 0,
    bytesDown: 0,
    traffic: NO_TRAFFIC,
    rounds: 0,
    profile: profile ?? defaultProfile(workerId),
    lastSeenAt: null,
    latencyMs: null,
    attack: null,
    missed: 0,
    replicaVersion: null,
  };
  members.set(workerId, member);
  return member;
}

/** The connected members, who the next round asks. */
export function connectedMembers(members: Members): WorkerId[] {
  return [...members.values()].filter((m) => m.connected).map((m) => m.workerId);
}

/** The participants that missed dormantAfter rounds in a row: still asked, but no longer waited for. */
export function dormantMembers(
  members: Members,
  participants: readonly WorkerId[],
  dormantAfter: number,
): Set<WorkerId> {
  return new Set(participants.filter((id) => members.get(id)!.missed >= dormantAfter));
}

/** After a round closed: a participant that contributed has missed none in a row, the others one more. */
export function countMissed(
  members: Members,
  participants: Iterable<WorkerId>,
  contributed: ReadonlyMap<WorkerId, unknown>,
): void {
  for (const workerId of participants) {
    const member = members.get(workerId);
    if (member) member.missed = contributed.has(workerId) ? 0 : member.missed + 1;
  }
}

/**
 * A run restored running (the server restarted): how many workers its last round had, who are expected back. Its
 * first round opens once a quorum of them has reconnected, or a round deadline after the first one did
 * (docs/protocol.md, "Persistence"). Without it that round would close with the first tab to reconnect as its only
 * contributor.
 */
export class ReturnWait {
  readonly #expected: number;
  #until: number | null = null;
  #cancel: (() => void) | null = null;

  constructor(expected: number) {
    this.#expected = expected;
  }

  /**
   * Whether the first round should wait for more of the class, with `connected` back now; while it waits, `wake`
   * runs once when the wait is over, however many came back.
   */
  holds(connected: number, config: RunConfig, scheduler: Scheduler, wake: () => void): boolean {
    const { quorum, roundDeadlineMs } = config;
    const needed = Math.min(this.#expected, Math.max(quorum.minimum, Math.ceil(quorum.fraction * this.#expected)));
    const now = scheduler.now();
    this.#until ??= now + roundDeadlineMs;
    if (connected >= needed || now >= this.#until) return false;
    this.#cancel ??= scheduler.after(this.#until - now, () => {
      this.#cancel = null;
      this.#until = 0;
      wake();
    });
    return true;
  }

  /** Cancels its timer. */
  stop(): void {
    this.#cancel?.();
  }
}
