/**
 * Budgets matched by bytes (the one home of that policy: the dashboard's race
 * and `npm run compare` both use it). TernGrad's fixed 2 bits per entry sets
 * the target; QSGD matches it in its fixed-width coding with 1 level (sign +
 * 1 level bit) and a norm per bucket of 512 entries (+1/16 bit an entry, as in
 * the QSGD paper; its Elias coding sends fewer bytes at any s, so no s matches), and the
 * ATOMO budgets and PowerSGD's rank are solved for it from core/codec/sizes.ts's
 * expected bytes; atomo-auto takes the target as its byte budget. Float32
 * stays unmatched: it is the reference.
 */
import type { AtomoSchemeName, Compression, SchemeName } from '../atomo/types';
import type { ModelLayout } from '../model/layout';
import { expectedBytes } from './sizes';

/** QSGD's bucket size in a byte-matched comparison: one norm per 512 entries, as in the QSGD paper. */
export const MATCHED_QSGD_BUCKET = 512;

/**
 * The smallest budget (to 3 significant digits) whose expected bytes per round reach `target`, by bisection (bytes grow
 * with the budget).
 */
export function solveBudget(
  layout: ModelLayout,
  scheme: AtomoSchemeName | 'powersgd',
  target: number,
  batchSize: number,
): number {
  let low = 0;
  let high = layout.tensors.reduce((max, t) => Math.max(max, t.size), 1);
  for (let i = 0; i < 60; i++) {
    const mid = (low + high) / 2;
    if (expectedBytes(layout, { scheme, budget: mid, levels: 1 }, batchSize) < target) low = mid;
    else high = mid;
  }
  return Number(high.toPrecision(3));
}

/** Expected bytes of one worker's TernGrad round on `layout`: the target every matched budget aims at. */
export function matchedTargetBytes(layout: ModelLayout, batchSize: number): number {
  return expectedBytes(layout, { scheme: 'terngrad', budget: 0, levels: 1 }, batchSize);
}

/** The compression of each scheme, matched to TernGrad's bytes per round (float32 unmatched), in the order given. */
export function matchedCompressions(
  layout: ModelLayout,
  batchSize: number,
  schemes: readonly SchemeName[],
): Compression[] {
  const target = matchedTargetBytes(layout, batchSize);
  return schemes.map((scheme): Compression => {
    switch (scheme) {
      case 'atomo-svd':
      case 'atomo-entry':
      case 'atomo-dct':
        return { scheme, budget: solveBudget(layout, scheme, target, batchSize), levels: 1 };
      case 'powersgd':
        // The rank is an integer: the nearest to the matched bytes, at least 1.
        return { scheme, budget: Math.max(1, Math.round(solveBudget(layout, scheme, target, batchSize))), levels: 1 };
      case 'qsgd':
        return { scheme, budget: 0, levels: 1, bucketSize: MATCHED_QSGD_BUCKET, qsgdCoding: 'fixed' };
      case 'atomo-auto':
        // Its knob is the bytes themselves: the target, split across layers by the worker (core/atomo/byteBudget.ts).
        return { scheme, budget: 0, levels: 1, byteBudget: Math.round(target) };
      default:
        return { scheme, budget: 0, levels: 1 };
    }
  });
}
