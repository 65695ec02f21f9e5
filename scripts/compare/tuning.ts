/**
 * The learning rate of each setting: trained once per candidate on a tuning
 * seed that no reported run uses, and chosen by one rule, the same for
 * every setting: fewest rounds to the task's headline target (a run that never got
 * there ranks after every run that did), then the higher final test
 * accuracy, then the smaller rate.
 */
import { atTarget, type EvalPoint } from './stats';

/** The candidates when none are given. */
export const TUNING_LEARNING_RATES = [0.025, 0.05, 0.1, 0.2] as const;

/** The seed the tuning trains on when none is given: the reported seeds start at 1. */
export const TUNING_SEED = 0;

/** The rule, in words, for the report, with the target whose rounds it minimises (the task's headline target). */
export function tuningRule(target: number): string {
  return `fewest rounds to ${+(target * 100).toFixed(1)}% on the tuning seed, then the higher final test accuracy`;
}

/** One candidate's tuning run. */
export interface TuningTrial {
  readonly learningRate: number;
  /** Rounds to the target, null when the run never reached it. */
  readonly roundsToTarget: number | null;
  readonly finalAccuracy: number | null;
}

/** What tuning.json keeps per setting. */
export interface TuningRecord {
  readonly seed: number;
  readonly rounds: number;
  readonly workers: number;
  readonly rule: string;
  readonly trials: readonly TuningTrial[];
  readonly learningRate: number;
}

/** The trial of one candidate from its evaluations, by its rounds to `target`. */
export function tuningTrial(learningRate: number, points: readonly EvalPoint[], target: number): TuningTrial {
  const hit = atTarget(points, target, (p) => p.round);
  return {
    learningRate,
    roundsToTarget: hit === null || hit.censored ? null : hit.value,
    finalAccuracy: points.at(-1)?.accuracy ?? null,
  };
}

/** The chosen learning rate among `trials` (at least one) by the rule above. */
export function chooseLearningRate(trials: readonly TuningTrial[]): number {
  if (trials.length === 0) throw new RangeError('no learning rate to choose from');
  const ranked = [...trials].sort(
    (a, b) =>
      (a.roundsToTarget ?? Infinity) - (b.roundsToTarget ?? Infinity) ||
      (b.finalAccuracy ?? -1) - (a.finalAccuracy ?? -1) ||
      a.learningRate - b.learningRate,
  );
  return ranked[0]!.learningRate;
}
