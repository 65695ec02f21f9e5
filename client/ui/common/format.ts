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
  'atomo-dct': 'ATOMO Fourier (DCT)',
  powersgd: 'PowerSGD (biased, error feedback)',
};

/** A scheme with its knob: "ATOMO spectral, budget 2", "QSGD, 4 levels". */
export function describeCompression(config: Pick<RunConfig, 'scheme' | 'budget' | 'levels'>): string {
  switch (config.scheme) {
    case 'atomo-svd':
    case 'atomo-entry':
    case 'atomo-dct':
      return `${SCHEME_LABELS[config.scheme]}, budget ${formatNumber(config.budget)}`;
    case 'powersgd':
      return `${SCHEME_LABELS[config.scheme]}, rank ${formatNumber(config.budget)}`;
    case 'qsgd':
      return `QSGD, ${config.levels} level${config.levels === 1 ? '' : 's'}`;
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
