/** How numbers read on screen: bytes, ratios, accuracies, times and scheme names, in the language shown. */
import type { AggregationRule, DownlinkChoice, DownlinkMetrics, LayerSentAs, RunConfig } from '../../../core/protocol';
import type { SchemeName } from '../../../core/atomo/types';
import { currentLanguage, t } from '../../i18n';

const numberFormats = new Map<string, Intl.NumberFormat>();
/** A cached Intl.NumberFormat for the language shown now. */
function numberFormat(options: Intl.NumberFormatOptions): Intl.NumberFormat {
  const key = `${currentLanguage()}|${JSON.stringify(options)}`;
  let format = numberFormats.get(key);
  if (format === undefined) {
    format = new Intl.NumberFormat(currentLanguage(), options);
    numberFormats.set(key, format);
  }
  return format;
}

/** A number with at most 3 significant digits, no trailing zeros. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return '–';
  return numberFormat({ maximumSignificantDigits: 3 }).format(value);
}

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
  const digits =
    unit === 0
      ? numberFormat({ maximumFractionDigits: 0 }).format(value)
      : numberFormat({ minimumSignificantDigits: 3, maximumSignificantDigits: 3 }).format(value);
  return `${digits} ${units[unit]}`;
}

/** A fraction as a percentage with one decimal: "91.2%". */
export function formatPercent(fraction: number | null): string {
  return fraction === null || !Number.isFinite(fraction)
    ? '–'
    : numberFormat({ style: 'percent', minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(fraction);
}

/** The compression ratio in words: "16× smaller than float32 (6.2% of the bytes)". */
export function ratioInWords(bytes: number, denseBytes: number): string {
  if (bytes <= 0 || denseBytes <= 0) return t('ratio.nothingYet');
  const ratio = denseBytes / bytes;
  if (ratio < 1.05 && ratio > 0.95) return t('ratio.same');
  const times = numberFormat({
    maximumFractionDigits: ratio >= 10 ? 0 : 1,
    minimumFractionDigits: ratio >= 10 ? 0 : 1,
  });
  return ratio > 1
    ? t('ratio.smaller', { times: times.format(ratio), percent: formatPercent(bytes / denseBytes) })
    : t('ratio.larger', { times: times.format(1 / ratio) });
}

/** How a layer travelled (a decomposition, or float32), in the language shown. */
export function sentAsLabel(kind: LayerSentAs): string {
  return t(`sentAs.${kind}`);
}

/** The scheme's name in the language shown. */
export function schemeLabel(scheme: SchemeName): string {
  return t(`scheme.${scheme}`);
}

/**
 * The closed-form variance E‖ĝ − g‖² a scheme reports, as a formula
 * (docs/design.md, "Variance"): Σλ²(1/p − 1) over the atoms for ATOMO,
 * TernGrad and 1-level QSGD (ATOMO on entries); for QSGD with more levels,
 * each entry rounds between two adjacent levels of its bucket, hence
 * Σ_k (‖g_k‖/s)² Σ f(1 − f), f the fractional part of s|gᵢ|/‖g_k‖.
 * PowerSGD is deterministic and biased: what it reports is its
 * reconstruction error ‖ĝ − g‖², not a variance.
 */
export function varianceFormula(
  config: Pick<RunConfig, 'scheme' | 'levels'> & { readonly bucketSize?: number },
): string {
  if (config.scheme === 'none') return '0';
  if (config.scheme === 'powersgd') return '‖ĝ−g‖²';
  if (config.scheme !== 'qsgd') return 'Σλ²(1/p−1)';
  const buckets = (config.bucketSize ?? 0) > 0;
  if (config.levels === 1) return buckets ? 'Σ per bucket λ²(1/p−1)' : 'Σλ²(1/p−1)';
  return buckets ? 'Σₖ(‖gₖ‖/s)²Σf(1−f)' : 'Σ(‖g‖/s)²f(1−f)';
}

/**
 * A scheme with its knob: "ATOMO spectral, budget 2", "QSGD, 3 levels, buckets of 512";
 * a biased run marked so: "…, error feedback (biased)" on an unbiased scheme, "TernGrad, clipped at ±2.5σ (biased)".
 */
export function describeCompression(
  config: Pick<RunConfig, 'scheme' | 'budget' | 'levels' | 'errorFeedback'> & {
    readonly bucketSize?: number;
    readonly byteBudget?: number | undefined;
    readonly terngradClip?: number | undefined;
  },
): string {
  return withBiasMark(config, describeScheme(config));
}

/** The scheme's name, marked biased when the run is (isBiased): what chart legends and bars print. */
export function schemeTag(
  config: Pick<RunConfig, 'scheme' | 'errorFeedback'> & { readonly terngradClip?: number | undefined },
): string {
  return withBiasMark(config, schemeLabel(config.scheme));
}

/**
 * `text` marked biased (core/atomo/types.ts isBiased): "…, error feedback (biased)" for an unbiased scheme run with
 * error feedback (PowerSGD's own label says it already), "…, clipped at ±cσ (biased)" for clipped TernGrad.
 */
function withBiasMark(
  config: Pick<RunConfig, 'scheme' | 'errorFeedback'> & { readonly terngradClip?: number | undefined },
  text: string,
): string {
  const clip = config.terngradClip ?? 0;
  if (config.errorFeedback === true && config.scheme !== 'none' && config.scheme !== 'powersgd')
    return t('scheme.withErrorFeedback', { scheme: text });
  if (config.scheme === 'terngrad' && clip > 0) return t('scheme.withClip', { scheme: text, clip: formatNumber(clip) });
  return text;
}

function describeScheme(
  config: Pick<RunConfig, 'scheme' | 'budget' | 'levels'> & {
    readonly bucketSize?: number;
    readonly byteBudget?: number | undefined;
  },
): string {
  if (config.byteBudget !== undefined)
    return t('scheme.withByteBudget', { scheme: schemeLabel(config.scheme), bytes: formatBytes(config.byteBudget) });
  switch (config.scheme) {
    case 'atomo-svd':
    case 'atomo-entry':
    case 'atomo-dct':
      return t('scheme.withBudget', { scheme: schemeLabel(config.scheme), budget: formatNumber(config.budget) });
    case 'powersgd':
      return t('scheme.withRank', { scheme: schemeLabel(config.scheme), rank: formatNumber(config.budget) });
    case 'qsgd':
      return (config.bucketSize ?? 0) > 0
        ? t('scheme.qsgdBuckets', { levels: t('scheme.qsgdLevels', { count: config.levels }), size: config.bucketSize })
        : t('scheme.qsgdLevels', { count: config.levels });
    default:
      return schemeLabel(config.scheme);
  }
}

/** The aggregation rule and its parameter, as the dashboard names it. */
export function describeAggregation(rule: AggregationRule): string {
  switch (rule.kind) {
    case 'norm-bound':
      return t('aggregation.normBound', { k: formatNumber(rule.k) });
    case 'trimmed-mean':
      return t('aggregation.trimmed', { percent: formatNumber(rule.trim * 100) });
    case 'median':
      return t('aggregation.median');
    case 'mean':
      return t('aggregation.mean');
  }
}

/** How a run's model reaches its workers (docs/protocol.md, "Downlink"), in words. */
export function describeDownlink(config: Pick<RunConfig, 'downlink' | 'downlinkBudget'>): string {
  switch (config.downlink) {
    case 'auto':
      return t('downlink.auto');
    case 'relay':
      return t('downlink.relay');
    case 'atomo':
      return t('downlink.atomo', { budget: formatNumber(config.downlinkBudget) });
    default:
      return t('downlink.full');
  }
}

/**
 * Why the `auto` downlink sent what it sent in a round (docs/protocol.md, "Downlink"): "relay: 3 × 115 kB = 344 kB <
 * model 407 kB", "full: relay 458 kB ≥ model 407 kB".
 */
export function describeDownlinkChoice(choice: DownlinkChoice): string {
  const model = formatBytes(choice.modelBytes);
  if (choice.relayBytes === null) return t('downlink.choice.nothing', { model });
  const relay = formatBytes(choice.relayBytes);
  if (choice.relayBytes >= choice.modelBytes) return t('downlink.choice.full', { relay, model });
  const each = formatBytes(choice.relayBytes / Math.max(1, choice.messages));
  return t('downlink.choice.relay', { messages: formatNumber(choice.messages), each, relay, model });
}

/** What a round's round:open messages were, by kind: "round 12: 3 relayed, 1 synced, 0 full". */
export function describeDeliveries(round: number, downlink: Pick<DownlinkMetrics, 'update' | 'sync' | 'full'>): string {
  const { update, sync, full } = downlink;
  return t('downlink.sent', { round: formatNumber(round), update, sync, full });
}

/** Milliseconds, rounded: "42 ms", "1.3 s". */
export function formatMs(ms: number): string {
  return ms >= 1000
    ? t('common.seconds', {
        value: numberFormat({ minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(ms / 1000),
      })
    : t('common.ms', { value: numberFormat({ maximumFractionDigits: 0 }).format(ms) });
}

const clockFormats = new Map<string, Intl.DateTimeFormat>();

/**
 * A timestamp (ms since epoch) as a time of day in the language shown:
 * "10:52:07". The format is made once per language (toLocaleTimeString
 * builds one per call, the dashboard's costliest call with a class online).
 */
export function formatClock(epochMs: number): string {
  const language = currentLanguage();
  let format = clockFormats.get(language);
  if (format === undefined) {
    format = new Intl.DateTimeFormat(language, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
    clockFormats.set(language, format);
  }
  return format.format(epochMs);
}

/** A chart tooltip's heading for a round: "Round 12". */
export function roundLabel(round: unknown): string {
  return t('common.round', { round: String(round) });
}
