/**
 * A run's traffic: the bytes of accepted gradients and round:open messages
 * (bytesUp, bytesDown) and the frames its members' sockets carried
 * (core/traffic), for the run and each member, and what a round adds.
 */
import {
  NO_TRAFFIC,
  addTraffic,
  subtractTraffic,
  type Direction,
  type FrameCategory,
  type WireTraffic,
} from '../../core/traffic/frames';
import type { Member, Members } from './members';
import type { OpenRound } from './round';

/** The run's totals, as a checkpoint keeps them (traffic absent in checkpoints written before frames were counted). */
export interface TrafficTotals {
  readonly bytesUp: number;
  readonly bytesDown: number;
  readonly traffic?: WireTraffic;
}

/** The run's byte and frame totals. */
export class RunTraffic {
  bytesUp: number;
  bytesDown: number;
  traffic: WireTraffic;
  /** traffic when the previous round closed. */
  #atClose: WireTraffic;

  constructor(totals: TrafficTotals) {
    this.bytesUp = totals.bytesUp;
    this.bytesDown = totals.bytesDown;
    this.traffic = totals.traffic ?? NO_TRAFFIC;
    this.#atClose = this.traffic;
  }

  /** A frame of a member's socket (metered by the socket layer, core/traffic): counted for the member and the run. */
  recordFrame(member: Member, direction: Direction, category: FrameCategory, bytes: number): void {
    const frame: WireTraffic =
      direction === 'up'
        ? { ...NO_TRAFFIC, [category === 'gradient' ? 'gradientUp' : 'controlUp']: bytes }
        : { ...NO_TRAFFIC, [category === 'model' ? 'modelDown' : 'controlDown']: bytes };
    member.traffic = addTraffic(member.traffic, frame);
    this.traffic = addTraffic(this.traffic, frame);
  }

  /** A closed round's bytes: what it sent down and the gradients it accepted, for the run and each member. */
  chargeRound(round: OpenRound, members: Members): void {
    for (const [workerId, bytes] of round.bytesDown) {
      this.bytesDown += bytes;
      const member = members.get(workerId);
      if (member) member.bytesDown += bytes;
    }
    for (const [workerId, contribution] of round.contributions) {
      this.bytesUp += contribution.bytesUp;
      const member = members.get(workerId);
      if (member) {
        member.bytesUp += contribution.bytesUp;
        member.rounds += 1;
      }
    }
  }

  /** The frames since the previous round closed; from here on, this round is the previous one. */
  closeRound(): WireTraffic {
    const since = subtractTraffic(this.traffic, this.#atClose);
    this.#atClose = this.traffic;
    return since;
  }

  /** Back to nothing, for the run and each member (a reset to version 0). */
  reset(members: Members): void {
    this.bytesUp = 0;
    this.bytesDown = 0;
    this.traffic = NO_TRAFFIC;
    this.#atClose = NO_TRAFFIC;
    for (const m of members.values()) {
      m.bytesUp = 0;
      m.bytesDown = 0;
      m.traffic = NO_TRAFFIC;
      m.rounds = 0;
    }
  }
}
