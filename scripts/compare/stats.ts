/**
 * What the comparison reports for each setting, over its seeds: rounds,
 * uplink and total megabytes and simulated time to each accuracy target
 * under each link, and accuracy at matched total bytes; as mean and spread.
 */
import { LINK_PRESETS, type LinkModel } from '../../core/traffic/linkModel';
import { simulatedRoundMs, type SwarmHistory } from '../swarm/history';

/** The networks of the comparison: the link model's presets (core/traffic/linkModel.ts). */
export const COMPARE_LINKS: readonly LinkModel[] = [
  LINK_PRESETS.classroomWifi,
  LINK_PRESETS.homeBroadband,
  LINK_PRESETS.datacentre,
];

/** Accuracy targets. */
export const TARGETS = [0.85, 0.9, 0.92] as const;

/** One evaluation of one run, with everything measured up to it. */
export interface EvalPoint {
  readonly round: number;
  readonly accuracy: number;
  readonly uplinkMB: number;
  readonly totalMB: number;
  /** Simulated seconds under each of COMPARE_LINKS. */
  readonly seconds: readonly number[];
}

/** The evaluations of a history, with cumulative bytes and simulated times. */
export function evalPoints(history: SwarmHistory, links: readonly LinkModel[] = COMPARE_LINKS): EvalPoint[] {
  const elapsed = links.map(() => 0);
  const out: EvalPoint[] = [];
  for (const r of history.rounds) {
    links.forEach((link, i) => (elapsed[i]! += simulatedRoundMs(r, link) / 1000));
    if (r.testAccuracy === null) continue;
    out.push({
      round: r.round + 1,
      accuracy: r.testAccuracy,
      uplinkMB: r.cumulativeWireUp / 1e6,
      totalMB: (r.cumulativeWireUp + r.cumulativeWireDown) / 1e6,
      seconds: [...elapsed],
    });
  }
  return out;
}

/** Mean and sample standard deviation of the values present, and how many there were. */
export interface Spread {
  readonly mean: number | null;
  readonly sd: number | null;
  readonly n: number;
}

export function spread(values: readonly (number | null)[]): Spread {
  const xs = values.filter((x): x is number => x !== null && Number.isFinite(x));
  if (xs.length === 0) return { mean: null, sd: null, n: 0 };
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = xs.length < 2 ? 0 : Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (xs.length - 1));
  return { mean, sd, n: xs.length };
}

/** The first evaluation at or above `target`, or null. */
export function reach(points: readonly EvalPoint[], target: number): EvalPoint | null {
  return points.find((p) => p.accuracy >= target) ?? null;
}

/** Accuracy of the last evaluation made within `totalMB` both ways (null when none was). */
export function accuracyAtMB(points: readonly EvalPoint[], totalMB: number): number | null {
  let accuracy: number | null = null;
  for (const p of points) {
    if (p.totalMB > totalMB) break;
    accuracy = p.accuracy;
  }
  return accuracy;
}
