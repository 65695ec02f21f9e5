/** The swarm history's time model: a recorded round under the link model, and the workers' times it keeps. */
import { describe, expect, it } from 'vitest';
import { asWorkerId, type RoundMetrics } from '../../core/protocol';
import { LINK_PRESETS, symmetricLink } from '../../core/traffic/linkModel';
import { contributorMs, simulatedRoundMs, toHistoryRound, type HistoryRound } from './history';

const MODEL = 407_128;
const GRADIENT = 9_024;

/**
 * A round of `contributors` equal gradients and `participants` float32 models down (only what the time model reads).
 */
function round(contributors: number, participants: number, computeMs: number[]): HistoryRound {
  return {
    contributors,
    participants,
    wireUp: contributors * GRADIENT,
    wireDown: participants * MODEL,
    workerComputeMs: computeMs,
    serverMs: 3,
  } as unknown as HistoryRound;
}

describe('simulatedRoundMs', () => {
  it('puts the whole round’s bytes on the server link: N models down and N gradients up', () => {
    const wifi = LINK_PRESETS.classroomWifi; // 50 Mbit/s shared, 5 ms
    for (const n of [1, 4, 16]) {
      const expected = 7 + (n * (MODEL + GRADIENT) * 8) / 50_000 + 2 * 5 + 3;
      expect(
        simulatedRoundMs(
          round(
            n,
            n,
            Array.from({ length: n }, (_, i) => 7 - i * 0.1),
          ),
          wifi,
        ),
      ).toBeCloseTo(expected, 9);
    }
    // Eight got the model, four contributed: the access point sent eight models.
    const partial = simulatedRoundMs(round(4, 8, [7, 7, 7, 7]), wifi);
    expect(partial).toBeCloseTo(7 + ((8 * MODEL + 4 * GRADIENT) * 8) / 50_000 + 10 + 3, 9);
  });

  it('without a server link, the slowest worker’s own path: the same for any N', () => {
    const link = symmetricLink(20, 10);
    const one = (MODEL * 8) / 20_000 + (GRADIENT * 8) / 20_000;
    for (const n of [1, 30]) expect(simulatedRoundMs(round(n, n, Array(n).fill(7)), link)).toBeCloseTo(7 + one + 23, 9);
  });

  it('with a calibration, every contributor takes its calibrated step plus the replica update it reported', () => {
    const link = symmetricLink(20, 10);
    const one = (MODEL * 8) / 20_000 + (GRADIENT * 8) / 20_000;
    const calibration = { computeMs: 2, compressMs: 1, encodeMs: 0.25 };
    const times = (applyMs?: number) => ({
      compressMs: 5,
      encodeMs: 1,
      clock: 'thread-cpu' as const,
      ...(applyMs === undefined ? {} : { applyMs }),
    });
    // Measured: 9 and 12 ms; calibrated: 3.25 ms each, plus 0.5 ms of update for the first, none reported by the
    // second.
    const measured = { ...round(2, 2, [9, 12]), workerTimes: [times(0.5), times()] };
    expect(contributorMs(measured)).toEqual([9, 12]);
    expect(contributorMs(measured, calibration)).toEqual([3.75, 3.25]);
    expect(simulatedRoundMs(measured, link, calibration)).toBeCloseTo(3.75 + one + 23, 9);
    expect(simulatedRoundMs(measured, link)).toBeCloseTo(12 + one + 23, 9);
    // A history without times (older ones) still takes the calibration, with no update time.
    expect(contributorMs(round(2, 2, [9, 12]), calibration)).toEqual([3.25, 3.25]);
  });
});

describe('simulatedRoundMs under a downlink that sends workers different messages', () => {
  it('gives each contributor the share of the wire its own download was: a sync sets the slowest path', () => {
    const link = symmetricLink(20, 10); // no server link: the slowest worker's own path sets the pace
    const sync = 2 * MODEL;
    const relay = 4 * GRADIENT;
    const unrecorded = { ...round(2, 2, [7, 7]), bytesDown: sync + relay, wireDown: sync + relay } as HistoryRound;
    const mixed: HistoryRound = { ...unrecorded, workerBytesDown: [relay, sync] };
    const path = (down: number) => (down * 8) / 20_000 + (GRADIENT * 8) / 20_000;
    expect(simulatedRoundMs(mixed, link)).toBeCloseTo(7 + path(sync) + 23, 9);
    // Shared evenly, the two would seem to wait the mean download, which neither did.
    expect(simulatedRoundMs(unrecorded, link)).toBeCloseTo(7 + path((sync + relay) / 2) + 23, 9);
  });
});

describe('toHistoryRound', () => {
  it('keeps each contributor’s computeMs and its split and clock, null where it sent none', () => {
    const times = { compressMs: 1.4, encodeMs: 0.1, clock: 'thread-cpu' } as const;
    const metrics = {
      version: 3,
      participants: 2,
      contributors: 2,
      workers: [
        { workerId: asWorkerId(1), loss: 1, bytesUp: 10, bytesDown: 20, computeMs: 4, times },
        { workerId: asWorkerId(2), loss: 1, bytesUp: 10, bytesDown: 20, computeMs: 9 },
      ],
      layers: [],
      traffic: { gradientUp: 1, controlUp: 0, modelDown: 2, controlDown: 0 },
      cumulativeTraffic: { gradientUp: 1, controlUp: 0, modelDown: 2, controlDown: 0 },
      durations: { totalMs: 50, collectMs: 40, decodeMs: 2, updateMs: 1, evalMs: 0 },
    } as unknown as RoundMetrics;
    const history = toHistoryRound(metrics);
    expect(history.workerComputeMs).toEqual([4, 9]);
    expect(history.workerTimes).toEqual([times, null]);
    expect(history.serverMs).toBe(3);
  });
});
