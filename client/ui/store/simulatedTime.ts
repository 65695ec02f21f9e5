/**
 * A run's rounds on a simulated network: the cumulative seconds its closed
 * rounds would take under each link preset of core/traffic/linkModel.ts,
 * evaluated with that module's roundTotalsTimeMs, as `npm run compare` does
 * (scripts/swarm/history.ts, simulatedRoundMs): each contributor's reported
 * time (forward/backward, compression, encoding), the round's wire bytes
 * shared evenly, and the server's decode and update time. A contributor without a reported time counts 0 ms,
 * and the clock counts such rounds so the chart can say so.
 */
import type { RoundMetrics, WorkerRoundMetrics } from '../../../core/protocol';
import { downlinkBytes, uplinkBytes, type WireTraffic } from '../../../core/traffic/frames';
import { LINK_PRESETS, roundTotalsTimeMs, type LinkModel } from '../../../core/traffic/linkModel';

/** A link preset of core/traffic/linkModel.ts, by its key. */
export type LinkPresetKey = keyof typeof LINK_PRESETS;
/** The presets' keys, in LINK_PRESETS's order (the dashboard's choices). */
export const LINK_PRESET_KEYS = Object.keys(LINK_PRESETS) as readonly LinkPresetKey[];

/** What a round's simulated time reads from its metrics (an old history, before frames were counted, lacks traffic). */
export type TimedRound = Pick<RoundMetrics, 'contributors' | 'participants' | 'bytesUp' | 'bytesDown'> & {
  readonly workers: readonly Partial<Pick<WorkerRoundMetrics, 'computeMs' | 'bytesDown'>>[];
  readonly durations?: Partial<Pick<RoundMetrics['durations'], 'decodeMs' | 'updateMs'>>;
  readonly traffic?: WireTraffic;
};

/** Cumulative simulated seconds under every preset, and the rounds whose contributors' times were missing. */
export interface SimulatedClock {
  readonly seconds: Readonly<Record<LinkPresetKey, number>>;
  readonly untimedRounds: number;
}

/** The clock of a run before its first round. */
export const START_CLOCK: SimulatedClock = {
  seconds: Object.fromEntries(LINK_PRESET_KEYS.map((key) => [key, 0])) as Record<LinkPresetKey, number>,
  untimedRounds: 0,
};

const orZero = (x: number | undefined) => (x !== undefined && Number.isFinite(x) && x >= 0 ? x : 0);

/** Whether every contributor of the round reported its time. */
function timed(round: TimedRound): boolean {
  return (
    round.workers.length >= round.contributors &&
    round.workers.every((w) => w.computeMs !== undefined && Number.isFinite(w.computeMs))
  );
}

/** The simulated wall-clock time of one round under `link`, ms. */
export function simulatedRoundMs(round: TimedRound, link: LinkModel): number {
  const wireUp = round.traffic === undefined ? round.bytesUp : uplinkBytes(round.traffic);
  const wireDown = round.traffic === undefined ? round.bytesDown : downlinkBytes(round.traffic);
  const computeMs = Array.from({ length: round.contributors }, (_, i) => orZero(round.workers[i]?.computeMs));
  const serverMs = orZero(round.durations?.decodeMs) + orZero(round.durations?.updateMs);
  const counts = { wireUp, wireDown, contributors: round.contributors, participants: round.participants };
  // What each contributor was sent, where every one reported it: a sync, the model and an update differ in size.
  const sent = round.workers.slice(0, round.contributors).map((w) => w.bytesDown);
  const totals =
    sent.length === round.contributors && sent.every((b) => b !== undefined && Number.isFinite(b))
      ? { ...counts, downPayload: { perContributor: sent as number[], total: round.bytesDown } }
      : counts;
  return roundTotalsTimeMs(totals, computeMs, serverMs, link);
}

/** The clock after one more round. */
export function tick(clock: SimulatedClock, round: TimedRound): SimulatedClock {
  const seconds = { ...clock.seconds };
  for (const key of LINK_PRESET_KEYS) seconds[key] += simulatedRoundMs(round, LINK_PRESETS[key]) / 1000;
  return { seconds, untimedRounds: clock.untimedRounds + (timed(round) ? 0 : 1) };
}

/** The clock after each round of a history, in order. */
export function clocksOf(rounds: readonly TimedRound[], start: SimulatedClock = START_CLOCK): SimulatedClock[] {
  const clocks: SimulatedClock[] = [];
  let clock = start;
  for (const round of rounds) {
    clock = tick(clock, round);
    clocks.push(clock);
  }
  return clocks;
}
