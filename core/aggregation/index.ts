/** Combining a round's estimates into one update: the mean and the robust rules. */
export * from './robust';
