import { describe, expect, it } from 'vitest';
import { asModelVersion, asRunId, type RoundMetrics, type RunSummary } from '../../../core/protocol';
import { DEFAULT_RUN_CONFIG } from '../../../core/schema';
import { NO_TRAFFIC } from '../../../core/traffic/frames';
import { LINK_PRESETS } from '../../../core/traffic/linkModel';
import { createDashboardStore } from './dashboardStore';
import { START_CLOCK, clocksOf, simulatedRoundMs, tick, type TimedRound } from './simulatedTime';

/** A round of `n` workers, each receiving `d` and sending `u` wire bytes and computing `computeMs` (absent: none). */
function round(n: number, d: number, u: number, computeMs: number | undefined, serverMs = 0): TimedRound {
  return {
    contributors: n,
    participants: n,
    bytesUp: 0,
    bytesDown: 0,
    workers: Array.from({ length: n }, () => (computeMs === undefined ? {} : { computeMs })),
    durations: { decodeMs: serverMs, updateMs: 0 },
    traffic: { gradientUp: n * u, controlUp: 0, modelDown: n * d, controlDown: 0 },
  };
}

// The MLP's float32 model down and a compressed gradient up (docs/results.md: 409 kB and ~26 kB per worker-round).
const D = 409_000;
const U = 26_000;

describe('simulated time of a run on the link presets', () => {
  it('is server-link bound on classroom Wi-Fi: N·(d + u)·8/B per round, plus compute, latency and server', () => {
    const wifi = LINK_PRESETS.classroomWifi;
    for (const n of [2, 8, 30]) {
      const link = (n * (D + U) * 8) / (wifi.serverMbps * 1000);
      expect(simulatedRoundMs(round(n, D, U, 12, 3), wifi)).toBeCloseTo(link + 12 + 2 * wifi.latencyMs + 3, 9);
    }
  });

  it('sums the rounds into cumulative seconds under every preset', () => {
    const rounds = [round(4, D, U, 10), round(4, D, U, 30), round(3, D, D, 20)];
    const clocks = clocksOf(rounds);
    expect(clocks).toHaveLength(3);
    for (const [key, link] of Object.entries(LINK_PRESETS)) {
      const each = rounds.map((r) => simulatedRoundMs(r, link) / 1000);
      expect(clocks.map((c) => c.seconds[key as keyof typeof LINK_PRESETS])).toEqual([
        each[0],
        each[0]! + each[1]!,
        each[0]! + each[1]! + each[2]!,
      ]);
    }
    const again = simulatedRoundMs(rounds[0]!, LINK_PRESETS.datacentre) / 1000;
    expect(tick(clocks[2]!, rounds[0]!).seconds.datacentre).toBe(clocks[2]!.seconds.datacentre + again);
  });

  it('lets compression win on classroom Wi-Fi and float32 tie in the datacentre (8 workers)', () => {
    // Float32 sends the model's size up; the compressed run spends 15 ms more compressing and encoding.
    const dense = round(8, D, D, 40);
    const compressed = round(8, D, U, 55);
    const wifi = LINK_PRESETS.classroomWifi;
    expect(simulatedRoundMs(dense, wifi) / simulatedRoundMs(compressed, wifi)).toBeGreaterThan(1.5);
    const dc = LINK_PRESETS.datacentre;
    // In the datacentre compute sets the pace: float32 is no slower than the compressed run.
    expect(simulatedRoundMs(dense, dc)).toBeLessThanOrEqual(simulatedRoundMs(compressed, dc));
  });

  it('counts a contributor without a reported time as 0 ms and counts the round as untimed', () => {
    const untimed = round(4, D, U, undefined);
    const zero = round(4, D, U, 0);
    const clock = tick(tick(START_CLOCK, untimed), round(4, D, U, 10));
    expect(clock.untimedRounds).toBe(1);
    expect(simulatedRoundMs(untimed, LINK_PRESETS.homeBroadband)).toBe(
      simulatedRoundMs(zero, LINK_PRESETS.homeBroadband),
    );
    // A round recording fewer workers than contributors lacks the others' times.
    expect(tick(START_CLOCK, { ...zero, workers: zero.workers.slice(1) }).untimedRounds).toBe(1);
  });

  it('falls back to the payload bytes for a history without frame counts', () => {
    const { traffic: _, ...bare } = round(2, D, U, 5);
    const payload = { ...bare, bytesUp: 2 * U, bytesDown: 2 * D };
    expect(simulatedRoundMs(payload, LINK_PRESETS.classroomWifi)).toBe(
      simulatedRoundMs(round(2, D, U, 5), LINK_PRESETS.classroomWifi),
    );
  });
});

describe('the dashboard store', () => {
  const runId = asRunId('r1');
  const summary = { runId, config: DEFAULT_RUN_CONFIG, status: 'running', version: asModelVersion(0) };
  const metrics = (version: number, r: TimedRound, accuracy: number | null): RoundMetrics =>
    ({
      ...r,
      runId,
      version: asModelVersion(version),
      trainLoss: 1,
      testLoss: accuracy === null ? null : 0.5,
      testAccuracy: accuracy,
      cumulativeBytesUp: 0,
      cumulativeBytesDown: 0,
      cumulativeTraffic: NO_TRAFFIC,
      layers: [],
    }) as unknown as RoundMetrics;

  it('puts the clock of every round so far on each evaluation, from the snapshot and from live rounds', () => {
    const rounds = [round(4, D, U, 10, 2), round(4, D, U, 20, 2), round(2, D, U, 30, 1)];
    const clocks = clocksOf(rounds);
    const store = createDashboardStore();
    store.getState().snapshot([summary as unknown as RunSummary], {
      [runId]: [metrics(0, rounds[0]!, null), metrics(1, rounds[1]!, 0.5)],
    });
    store.getState().metrics(metrics(2, rounds[2]!, 0.7));
    const view = store.getState().runs[runId]!;
    expect(view.evals.points.map((p) => p.simulatedS)).toEqual([clocks[1]!.seconds, clocks[2]!.seconds]);
    expect(view.clock).toEqual(clocks[2]);
  });
});
