/**
 * Combining a round's estimates into one update: the mean and the robust rules, and the exact sum they share with a
 * cluster's partial sums.
 */
export * from './robust';
export {
  accumulate,
  addPartial,
  estimateStats,
  finishMean,
  planSum,
  type EstimateStats,
  type SumPlan,
  type SumRule,
} from './exactSum';
