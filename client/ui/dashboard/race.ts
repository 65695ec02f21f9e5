/**
 * The "race": one run per scheme at matched expected bytes per round, so the
 * accuracy curves compare schemes at equal communication. Byte counts are
 * core/codec/sizes.ts's expected bytes; TernGrad's fixed 2 bits per entry sets the
 * target, QSGD matches it with 1 level (sign + 1 level bit) and a norm per
 * bucket of 512 entries (+1/16 bit an entry), and the ATOMO
 * budgets are solved for it. Float32 runs alongside as the unmatched
 * reference every chart compares to.
 */
import type { AtomoSchemeName, Compression, SchemeName } from '../../../core/atomo';
import { expectedBytes } from '../../../core/codec';
import type { ModelLayout } from '../../../core/model';
import type { RunConfigPatch } from '../../../core/protocol';

/** The smallest budget (to 3 significant digits) whose expected bytes reach `target`, by bisection (bytes grow with the budget). */
function solveBudget(layout: ModelLayout, scheme: AtomoSchemeName | 'powersgd', target: number, batchSize: number): number {
  let low = 0;
  let high = layout.tensors.reduce((max, t) => Math.max(max, t.size), 1);
  for (let i = 0; i < 60; i++) {
    const mid = (low + high) / 2;
    if (expectedBytes(layout, { scheme, budget: mid, levels: 1 }, batchSize) < target) low = mid;
    else high = mid;
  }
  return Number(high.toPrecision(3));
}

/** QSGD's bucket size in a race: one norm per 512 entries, as in the QSGD paper. */
const RACE_QSGD_BUCKET = 512;

/** The order of the race's runs: with few workers, the first ones get them. */
export const RACE_SCHEMES: readonly SchemeName[] = ['atomo-svd', 'qsgd', 'terngrad', 'atomo-entry', 'atomo-dct', 'powersgd', 'none'];

/** The compression of each race run, matched to TernGrad's bytes per round (float32 unmatched). */
export function raceCompressions(layout: ModelLayout, batchSize: number): Compression[] {
  const target = expectedBytes(layout, { scheme: 'terngrad', budget: 0, levels: 1 }, batchSize);
  return RACE_SCHEMES.map((scheme) => {
    switch (scheme) {
      case 'atomo-svd':
      case 'atomo-entry':
      case 'atomo-dct':
        return { scheme, budget: solveBudget(layout, scheme, target, batchSize), levels: 1 };
      case 'powersgd':
        // The rank is an integer: the nearest to the matched bytes, at least 1.
        return { scheme, budget: Math.max(1, Math.round(solveBudget(layout, scheme, target, batchSize))), levels: 1 };
      case 'qsgd':
        return { scheme, budget: 0, levels: 1, bucketSize: RACE_QSGD_BUCKET };
      default:
        return { scheme, budget: 0, levels: 1 };
    }
  });
}

/** The run configurations of a race: the shared settings plus each scheme's matched knob. */
export function raceConfigs(layout: ModelLayout, shared: RunConfigPatch & { readonly batchSize: number }, label: string): RunConfigPatch[] {
  return raceCompressions(layout, shared.batchSize).map((c) => ({
    ...shared,
    name: `${label} · ${c.scheme}`,
    scheme: c.scheme,
    budget: c.budget,
    levels: Math.max(1, c.levels),
    bucketSize: c.bucketSize ?? 0,
  }));
}
