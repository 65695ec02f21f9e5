/** Random permutations for the split, the shards and the minibatch epochs. */
import type { DrawSequence } from './random';

/** Shuffles `values` in place, uniformly over all orders (Fisher–Yates, Durstenfeld's form). */
export function shuffleInPlace(values: Uint32Array, draws: DrawSequence): void {
  for (let last = values.length - 1; last > 0; last--) {
    const pick = draws.nextInt(last + 1);
    const kept = values[last]!;
    values[last] = values[pick]!;
    values[pick] = kept;
  }
}

/** A uniformly random permutation of 0, 1, …, n − 1. */
export function randomPermutation(n: number, draws: DrawSequence): Uint32Array {
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  shuffleInPlace(order, draws);
  return order;
}
