/**
 * The "race": one run per scheme at matched expected bytes per round, so the
 * accuracy curves compare schemes at equal communication. Byte counts follow
 * docs/wire-format.md's formulas; TernGrad's fixed 2 bits per entry sets the
 * target, QSGD matches it with 1 level (sign + 1 level bit), and the ATOMO
 * budgets are solved for it. Float32 runs alongside as the unmatched
 * reference every chart compares to.
 */
import { HEADER_BYTES } from '../../../core/codec';
import type { AtomoSchemeName, SchemeName } from '../../../core/atomo/types';
import type { ModelLayout } from '../../../core/model';
import type { RunConfigPatch } from '../../../core/protocol';

/** A scheme and its knob. */
export interface RaceCompression {
  readonly scheme: SchemeName;
  readonly budget: number;
  readonly levels: number;
}

/** Bytes of one LEB128 varint of `value`. */
function varintBytes(value: number): number {
  let bytes = 1;
  while (value >= 128) {
    value = Math.floor(value / 128);
    bytes++;
  }
  return bytes;
}

/**
 * Expected bytes of one worker's gradient for one round. Spectral ATOMO
 * sends s atoms per layer in expectation, at most rank ≤ min(rows, cols,
 * batch) of them; entry-wise and Fourier (DCT) ATOMO s entries or coefficients, each a float and a varint gap
 * whose size is taken at the mean gap.
 */
export function expectedRoundBytes(layout: ModelLayout, c: RaceCompression, batchSize: number): number {
  let total = 0;
  for (const { shape } of layout.tensors) {
    const [rows, cols] = shape;
    const entries = rows * cols;
    switch (c.scheme) {
      case 'none':
        total += HEADER_BYTES + 4 * entries;
        break;
      case 'terngrad':
        total += HEADER_BYTES + 4 + Math.ceil(entries / 4);
        break;
      case 'qsgd':
        total += HEADER_BYTES + 4 + 2 + Math.ceil((entries * (1 + (32 - Math.clz32(c.levels)))) / 8);
        break;
      case 'atomo-svd': {
        const atoms = Math.min(c.budget, rows, cols, batchSize);
        total += HEADER_BYTES + 4 + 4 * atoms * (rows + cols + 1);
        break;
      }
      case 'powersgd': {
        const rank = Math.min(c.budget, rows, cols);
        total += HEADER_BYTES + 4 + 4 * rank * (rows + cols);
        break;
      }
      case 'atomo-entry':
      case 'atomo-dct': {
        const kept = Math.min(c.budget, entries);
        total += HEADER_BYTES + 4 + kept * (4 + varintBytes(Math.round(entries / Math.max(kept, 1))));
        break;
      }
    }
  }
  return total;
}

/** The smallest budget (to 3 significant digits) whose expected bytes reach `target`, by bisection (bytes grow with the budget). */
function solveBudget(layout: ModelLayout, scheme: AtomoSchemeName | 'powersgd', target: number, batchSize: number): number {
  let low = 0;
  let high = layout.tensors.reduce((max, t) => Math.max(max, t.size), 1);
  for (let i = 0; i < 60; i++) {
    const mid = (low + high) / 2;
    if (expectedRoundBytes(layout, { scheme, budget: mid, levels: 1 }, batchSize) < target) low = mid;
    else high = mid;
  }
  return Number(high.toPrecision(3));
}

/** The order of the race's runs: with few workers, the first ones get them. */
export const RACE_SCHEMES: readonly SchemeName[] = ['atomo-svd', 'qsgd', 'terngrad', 'atomo-entry', 'atomo-dct', 'powersgd', 'none'];

/** The compression of each race run, matched to TernGrad's bytes per round (float32 unmatched). */
export function raceCompressions(layout: ModelLayout, batchSize: number): RaceCompression[] {
  const target = expectedRoundBytes(layout, { scheme: 'terngrad', budget: 0, levels: 1 }, batchSize);
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
        return { scheme, budget: 0, levels: 1 };
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
  }));
}
