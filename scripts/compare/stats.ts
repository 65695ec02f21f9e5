/**
 * What the comparison reports for each setting, over its seeds: rounds,
 * uplink and total megabytes and simulated time to each accuracy target
 * under each link, and accuracy at matched total bytes. Figures to a target
 * are restricted means over seeds with percentile-bootstrap 95% intervals:
 * a run that never got there counts at its end (censored), never dropped.
 */
import type { TimeSource } from '../../core/protocol';
import { randomBits } from '../../core/rng/stream';
import { LINK_PRESETS, type LinkModel, type RoundTimeParts } from '../../core/traffic/linkModel';
import { simulatedRoundMs, simulatedRoundParts, type CalibratedTimes, type SwarmHistory } from '../swarm/history';

/** The networks of the comparison: the link model's presets (core/traffic/linkModel.ts). */
export const COMPARE_LINKS: readonly LinkModel[] = [
  LINK_PRESETS.classroomWifi,
  LINK_PRESETS.homeBroadband,
  LINK_PRESETS.datacentre,
];

/** One evaluation of one run, with everything measured up to it. */
export interface EvalPoint {
  readonly round: number;
  readonly accuracy: number;
  readonly uplinkMB: number;
  readonly totalMB: number;
  /** Simulated seconds under each of COMPARE_LINKS. */
  readonly seconds: readonly number[];
}

/**
 * The evaluations of a history, with cumulative bytes and simulated times (the workers' times from `calibration`
 * where given, else their own: scripts/swarm/history.ts simulatedRoundMs).
 */
export function evalPoints(
  history: SwarmHistory,
  links: readonly LinkModel[] = COMPARE_LINKS,
  calibration?: CalibratedTimes,
): EvalPoint[] {
  const elapsed = links.map(() => 0);
  const out: EvalPoint[] = [];
  for (const r of history.rounds) {
    links.forEach((link, i) => (elapsed[i]! += simulatedRoundMs(r, link, calibration) / 1000));
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

/** Where a setting's simulated seconds take the workers' step times from, and the mean step they come to. */
export interface SettingTimes {
  /** `calibration`: timed on an idle core before training (scripts/compare/calibration.ts); else the workers' clock. */
  readonly source: 'calibration' | TimeSource;
  /** Mean ms per worker-round: the gradient's compute, the compression, the encoding and the replica's update. */
  readonly computeMs: number;
  readonly compressMs: number;
  readonly encodeMs: number;
  readonly applyMs: number;
}

/**
 * A setting's times over its histories' rounds and contributors: `calibration`'s compute, compression and encoding
 * where given, else the means of what the workers reported (their computeMs less its parts is the compute); the
 * replica's update is always the reported one. The workers' source is `thread-cpu` only if every contribution was
 * timed on that clock.
 */
export function settingTimes(histories: readonly SwarmHistory[], calibration?: CalibratedTimes): SettingTimes {
  const parts = histories.flatMap((h) =>
    h.rounds.flatMap((r) =>
      r.workerComputeMs.map((computeMs, i) => ({ computeMs, times: r.workerTimes?.[i] ?? null })),
    ),
  );
  const mean = (pick: (p: (typeof parts)[number]) => number) =>
    parts.length === 0 ? 0 : parts.reduce((sum, p) => sum + pick(p), 0) / parts.length;
  const applyMs = mean((p) => p.times?.applyMs ?? 0);
  if (calibration !== undefined) return { source: 'calibration', ...calibration, applyMs };
  const compressMs = mean((p) => p.times?.compressMs ?? 0);
  const encodeMs = mean((p) => p.times?.encodeMs ?? 0);
  return {
    source: parts.length > 0 && parts.every((p) => p.times?.clock === 'thread-cpu') ? 'thread-cpu' : 'wall',
    computeMs: mean((p) => p.computeMs) - compressMs - encodeMs - applyMs,
    compressMs,
    encodeMs,
    applyMs,
  };
}

/** Per link, the mean over every round of `histories` of where its simulated time goes. */
export function meanRoundParts(
  histories: readonly SwarmHistory[],
  links: readonly LinkModel[],
  calibration?: CalibratedTimes,
): RoundTimeParts[] {
  const rounds = histories.flatMap((h) => h.rounds);
  return links.map((link) => {
    const sum = { computeMs: 0, downMs: 0, upMs: 0, serverLinkMs: 0, latencyMs: 0, serverMs: 0 };
    for (const r of rounds) {
      const parts = simulatedRoundParts(r, link, calibration);
      for (const key of Object.keys(sum) as (keyof RoundTimeParts)[]) sum[key] += parts[key];
    }
    for (const key of Object.keys(sum) as (keyof RoundTimeParts)[]) sum[key] /= Math.max(1, rounds.length);
    return sum;
  });
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

/**
 * The percentile bootstrap's generator: Philox (core/rng) under a fixed key, so a report's intervals are the same
 * on every rerun of the same histories.
 */
export const BOOTSTRAP_SEED = 20180;

/** Resamples per interval: enough that the 2.5% and 97.5% quantiles move by well under their own width. */
export const BOOTSTRAP_RESAMPLES = 4000;

/** A mean with its percentile-bootstrap confidence interval. */
export interface MeanCi {
  readonly mean: number;
  readonly lo: number;
  readonly hi: number;
}

/** The q-quantile of sorted values, interpolated linearly between order statistics. */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) throw new RangeError('quantile of nothing');
  const at = q * (sorted.length - 1);
  const below = Math.floor(at);
  const above = Math.min(sorted.length - 1, below + 1);
  return sorted[below]! + (at - below) * (sorted[above]! - sorted[below]!);
}

/**
 * The mean of `values` and its percentile bootstrap interval at `level`: `resamples` resamples of the values with
 * replacement (indices from Philox stream `seed`), the interval between the (1 ∓ level)/2 quantiles of their means.
 * A sample of equal values gives a zero-width interval.
 */
export function bootstrapMeanCi(
  values: readonly number[],
  { level = 0.95, resamples = BOOTSTRAP_RESAMPLES, seed = BOOTSTRAP_SEED } = {},
): MeanCi {
  const n = values.length;
  if (n === 0) throw new RangeError('bootstrap of an empty sample');
  const mean = values.reduce((a, b) => a + b, 0) / n;
  const means = new Float64Array(resamples);
  for (let b = 0; b < resamples; b++) {
    let sum = 0;
    for (let i = 0; i < n; i++) {
      // 32 random bits scaled to an index: the bias against the last index is below n / 2³², nothing at n ≤ 100.
      const bits = randomBits({ seed, worker: 0, round: b, layer: 0 }, i);
      sum += values[Math.floor((bits / 0x100000000) * n)]!;
    }
    means[b] = sum / n;
  }
  means.sort();
  // Rounding of the resampled means can put them a few ulps off a constant sample's value: clamp to the sample.
  const lowest = Math.min(...values);
  const highest = Math.max(...values);
  const clamp = (x: number) => Math.min(highest, Math.max(lowest, x));
  return { mean, lo: clamp(quantile(means, (1 - level) / 2)), hi: clamp(quantile(means, (1 + level) / 2)) };
}

/**
 * The ratio of two samples' means, mean(numerators) / mean(denominators), with its percentile bootstrap interval:
 * each sample resampled on its own (independent runs), from two Philox streams under `seed`.
 */
export function bootstrapRatioCi(
  numerators: readonly number[],
  denominators: readonly number[],
  { level = 0.95, resamples = BOOTSTRAP_RESAMPLES, seed = BOOTSTRAP_SEED } = {},
): MeanCi {
  if (numerators.length === 0 || denominators.length === 0) throw new RangeError('bootstrap of an empty sample');
  const meanOf = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const resampledMean = (xs: readonly number[], b: number, layer: number) => {
    let sum = 0;
    for (let i = 0; i < xs.length; i++) {
      const bits = randomBits({ seed, worker: 0, round: b, layer }, i);
      sum += xs[Math.floor((bits / 0x100000000) * xs.length)]!;
    }
    return sum / xs.length;
  };
  const ratios = new Float64Array(resamples);
  for (let b = 0; b < resamples; b++) ratios[b] = resampledMean(numerators, b, 1) / resampledMean(denominators, b, 2);
  ratios.sort();
  return {
    mean: meanOf(numerators) / meanOf(denominators),
    lo: quantile(ratios, (1 - level) / 2),
    hi: quantile(ratios, (1 + level) / 2),
  };
}

/** One run's value of a quantity measured at a target: where it got there, or where it stopped (censored). */
export interface Censored {
  readonly value: number;
  /** The run ended before reaching the target: `value` is what it had spent by then, a lower bound. */
  readonly censored: boolean;
}

/**
 * A quantity at `target` for one run: `pick` at the first evaluation that reached it, or at its last evaluation
 * (censored) when none did. Null for a run with no evaluation.
 */
export function atTarget(
  points: readonly EvalPoint[],
  target: number,
  pick: (p: EvalPoint) => number,
): Censored | null {
  const hit = reach(points, target);
  if (hit !== null) return { value: pick(hit), censored: false };
  const last = points.at(-1);
  return last === undefined ? null : { value: pick(last), censored: true };
}

/**
 * The restricted mean over runs (each censored run counts at its end, never dropped), with its bootstrap interval
 * and how many runs were censored. With any censored, the mean is a lower bound on the mean to the target.
 */
export interface CensoredMean extends MeanCi {
  readonly n: number;
  readonly censored: number;
}

export function censoredMean(runs: readonly (Censored | null)[]): CensoredMean | null {
  const present = runs.filter((r): r is Censored => r !== null);
  if (present.length === 0) return null;
  return {
    ...bootstrapMeanCi(present.map((r) => r.value)),
    n: present.length,
    censored: present.filter((r) => r.censored).length,
  };
}
