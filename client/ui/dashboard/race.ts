/**
 * The "race": one run per scheme at matched expected bytes per round, so the
 * accuracy curves compare schemes at equal communication (the matching is
 * core/codec/budgets.ts's, shared with `npm run compare`). Float32 runs
 * alongside as the unmatched reference every chart compares to. A race may
 * run on one of core/traffic/linkModel.ts's link presets: every run of it
 * carries that `link`, so its tabs pace their rounds to the simulated network.
 */
import type { Compression, SchemeName } from '../../../core/atomo';
import { matchedCompressions } from '../../../core/codec/budgets';
import type { ModelLayout } from '../../../core/model';
import type { RunConfigPatch } from '../../../core/protocol';
import { LINK_PRESETS } from '../../../core/traffic/linkModel';
import type { LinkPresetKey } from '../store/simulatedTime';

/** A race's network: a link preset, or `none` (no pacing: the real network). */
export type RaceLink = LinkPresetKey | 'none';

/** Shared settings of a race's runs on `link`: the defaults, evaluated often enough to draw the trade-off. */
export function raceSettings(link: RaceLink) {
  return {
    model: 'mlp',
    batchSize: 32,
    learningRate: 0.1,
    evalEvery: 5,
    link: link === 'none' ? null : LINK_PRESETS[link],
  } as const satisfies RunConfigPatch;
}

/** The order of the race's runs: with few workers, the first ones get them. */
export const RACE_SCHEMES: readonly SchemeName[] = [
  'atomo-svd',
  'atomo-auto',
  'qsgd',
  'terngrad',
  'atomo-entry',
  'atomo-dct',
  'powersgd',
  'none',
];

/**
 * The compression of each race run, matched to TernGrad's bytes per round (float32 unmatched; core/codec/budgets.ts).
 */
export function raceCompressions(layout: ModelLayout, batchSize: number): Compression[] {
  return matchedCompressions(layout, batchSize, RACE_SCHEMES);
}

/** The run configurations of a race: the shared settings plus each scheme's matched knob. */
export function raceConfigs(
  layout: ModelLayout,
  shared: RunConfigPatch & { readonly batchSize: number },
  label: string,
): RunConfigPatch[] {
  return raceCompressions(layout, shared.batchSize).map((c) => ({
    ...shared,
    name: `${label} · ${c.scheme}`,
    scheme: c.scheme,
    budget: c.budget,
    levels: Math.max(1, c.levels),
    bucketSize: c.bucketSize ?? 0,
    // The byte match of QSGD holds in its fixed-width coding (core/codec/budgets.ts).
    ...(c.qsgdCoding === undefined ? {} : { qsgdCoding: c.qsgdCoding }),
    ...(c.byteBudget === undefined ? {} : { byteBudget: c.byteBudget }),
  }));
}
