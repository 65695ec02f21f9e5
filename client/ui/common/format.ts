/** How numbers read on screen: bytes, ratios, accuracies, scheme names. */
import type { RunConfig } from '../../../core/protocol';
import type { SchemeName } from '../../../core/atomo/types';

/** Bytes in SI units, 3 significant digits: "25.4 kB", "1.21 MB". */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return '–';
  const units = ['B', 'kB', 'MB', 'GB'];
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${unit === 0 ? Math.round(value) : value.toPrecision(3)} ${units[unit]}`;
}

/** A fraction as a percentage with one decimal: "91.2%". */
export function formatPercent(fraction: number | null): string {
  return fraction === null || !Number.isFinite(fraction) ? '–' : `${(fraction * 100).toFixed(1)}%`;
}

/** The compression ratio in words: "16× smaller than float32 (6.2% of the bytes)". */
export function ratioInWords(bytes: number, denseBytes: number): string {
  if (bytes <= 0 || denseBytes <= 0) return 'nothing sent yet';
  const ratio = denseBytes / bytes;
  if (ratio < 1.05 && ratio > 0.95) return 'the same as float32 (no compression)';
  const times = ratio >= 10 ? ratio.toFixed(0) : ratio.toFixed(1);
  return ratio > 1
    ? `${times}× smaller than float32 (${((100 * bytes) / denseBytes).toFixed(1)}% of the bytes)`
    : `${(1 / ratio).toFixed(1)}× larger than float32`;
}

/** Human names of the schemes. */
export const SCHEME_LABELS: Readonly<Record<SchemeName, string>> = {
  none: 'float32 (uncompressed)',
  'atomo-svd': 'ATOMO spectral',
  'atomo-entry': 'ATOMO entry-wise',
  qsgd: 'QSGD',
  terngrad: 'TernGrad',
};

/**
 * The closed-form variance E‖ĝ − g‖² a scheme reports, as a formula
 * (docs/design.md, "Variance"): Σλ²(1/p − 1) over the atoms for ATOMO,
 * TernGrad and 1-level QSGD (ATOMO on entries); for QSGD with more levels,
 * each entry rounds between two adjacent levels of its bucket, hence
 * Σ_k (‖g_k‖/s)² Σ f(1 − f), f the fractional part of s|gᵢ|/‖g_k‖.
 */
export function varianceFormula(config: Pick<RunConfig, 'scheme' | 'levels'> & { readonly bucketSize?: number }): string {
  if (config.scheme === 'none') return '0 (sent exactly)';
  if (config.scheme !== 'qsgd') return 'Σλ²(1/p−1)';
  const buckets = (config.bucketSize ?? 0) > 0;
  if (config.levels === 1) return buckets ? 'Σ per bucket λ²(1/p−1)' : 'Σλ²(1/p−1)';
  return buckets ? 'Σₖ(‖gₖ‖/s)²Σf(1−f)' : 'Σ(‖g‖/s)²f(1−f)';
}

/** A scheme with its knob: "ATOMO spectral, budget 2", "QSGD, 3 levels, buckets of 512". */
export function describeCompression(config: Pick<RunConfig, 'scheme' | 'budget' | 'levels'> & { readonly bucketSize?: number }): string {
  switch (config.scheme) {
    case 'atomo-svd':
    case 'atomo-entry':
      return `${SCHEME_LABELS[config.scheme]}, budget ${formatNumber(config.budget)}`;
    case 'qsgd':
      return `QSGD, ${config.levels} level${config.levels === 1 ? '' : 's'}${(config.bucketSize ?? 0) > 0 ? `, buckets of ${config.bucketSize}` : ''}`;
    default:
      return SCHEME_LABELS[config.scheme];
  }
}

/** A number with at most 3 significant digits, no trailing zeros. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return '–';
  return Number(value.toPrecision(3)).toString();
}

/** Milliseconds, rounded: "42 ms", "1.3 s". */
export function formatMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
}
