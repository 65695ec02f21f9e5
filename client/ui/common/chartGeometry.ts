/**
 * The arithmetic of the tab's live charts (LiveChart.tsx): axis domains and
 * ticks, linear and log scales, and SVG paths for lines, steps and stacked
 * areas. Pure functions of numbers, so a redraw is a few string joins.
 */

/** A scale: data value → pixel. */
export type Scale = (value: number) => number;

/** Ticks at multiples of 1, 2 or 5 × 10ᵏ inside [min, max], about `count` + 1 of them. */
export function niceTicks(min: number, max: number, count = 5): number[] {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [];
  if (max <= min) return [min];
  // The 1-2-5 step nearest (on a log scale) to span / count, as d3's ticks choose it.
  const raw = (max - min) / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(raw));
  const error = raw / power;
  const step = (error >= Math.sqrt(50) ? 10 : error >= Math.sqrt(10) ? 5 : error >= Math.sqrt(2) ? 2 : 1) * power;
  const ticks: number[] = [];
  // Rounded to the step's precision, so 0.1 + 0.2 prints as 0.3.
  const digits = Math.max(0, -Math.floor(Math.log10(step)));
  for (let v = Math.ceil(min / step - 1e-9) * step; v <= max + step * 1e-9; v += step)
    ticks.push(Number(v.toFixed(digits)));
  return ticks;
}

/** A linear domain for `values`: from 0 (or below, for negatives) up to the first nice step at or above the largest. */
export function linearDomain(values: readonly number[]): [number, number] {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return [0, 1];
  const low = Math.min(0, ...finite);
  const high = Math.max(...finite);
  if (high <= low) return [low, low + 1];
  const ticks = niceTicks(low, high, 6);
  const step = ticks.length > 1 ? ticks[1]! - ticks[0]! : high - low;
  return [low, Number((Math.ceil(high / step - 1e-9) * step).toPrecision(12))];
}

/** A log domain for the positive `values`: whole decades around them. */
export function logDomain(values: readonly number[]): [number, number] {
  const positive = values.filter((v) => v > 0 && Number.isFinite(v));
  if (positive.length === 0) return [1, 10];
  const low = Number(`1e${Math.floor(Math.log10(Math.min(...positive)))}`);
  const high = Number(`1e${Math.ceil(Math.log10(Math.max(...positive)))}`);
  return [low, high > low ? high : low * 10];
}

/** The decades 10ᵏ inside [min, max], thinned to at most `count` (every second, third, …). */
export function logTicks(min: number, max: number, count = 6): number[] {
  if (!(min > 0) || !(max > min)) return [];
  const first = Math.ceil(Math.log10(min) - 1e-9);
  const last = Math.floor(Math.log10(max) + 1e-9);
  const every = Math.max(1, Math.ceil((last - first + 1) / count));
  const ticks: number[] = [];
  // Parsed, not 10 ** k: 10 ** -4 is 0.00009999999999999999.
  for (let k = first; k <= last; k += every) ticks.push(Number(`1e${k}`));
  return ticks;
}

/**
 * Maps [d0, d1] onto [r0, r1]; a log scale maps log₁₀ of both (values ≤ 0 go to r0, clamped like any value
 * outside).
 */
export function scale(
  domain: readonly [number, number],
  range: readonly [number, number],
  kind: 'linear' | 'log' = 'linear',
): Scale {
  const [r0, r1] = range;
  const f = kind === 'log' ? (v: number) => Math.log10(v) : (v: number) => v;
  const d0 = f(domain[0]);
  const span = f(domain[1]) - d0 || 1;
  return (value) => {
    const t = kind === 'log' && !(value > 0) ? 0 : (f(value) - d0) / span;
    return r0 + Math.min(1, Math.max(0, t)) * (r1 - r0);
  };
}

const px = (v: number) => Math.round(v * 10) / 10;

/**
 * An SVG path through the points (x, y) in order; `step` holds each value until the next x (a step-after line).
 * Non-finite y breaks the line.
 */
export function linePath(xs: readonly number[], ys: readonly number[], step = false): string {
  let d = '';
  let open = false;
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i]!;
    const y = ys[i]!;
    if (!Number.isFinite(y)) {
      open = false;
      continue;
    }
    if (!open) d += `M${px(x)},${px(y)}`;
    else d += step ? `H${px(x)}V${px(y)}` : `L${px(x)},${px(y)}`;
    open = true;
  }
  return d;
}

/**
 * The closed outline between a top and a bottom line over the same xs (one band of a stacked area); the ys must be
 * finite.
 */
export function bandPath(
  xs: readonly number[],
  tops: readonly number[],
  bottoms: readonly number[],
  step = false,
): string {
  const n = xs.length;
  if (n === 0) return '';
  let d = linePath(xs, tops, step);
  if (step) {
    // Back along the bottom, which also holds each value over [x_i, x_{i+1}).
    for (let i = n - 2; i >= 0; i--) d += `V${px(bottoms[i]!)}H${px(xs[i]!)}`;
    if (n === 1) d += `V${px(bottoms[0]!)}`;
  } else {
    for (let i = n - 1; i >= 0; i--) d += `L${px(xs[i]!)},${px(bottoms[i]!)}`;
  }
  return `${d}Z`;
}

/**
 * Running sums of the series, bottom first: the band edges of a stacked area (each entry's [bottom, top] per point).
 */
export function stack(series: readonly (readonly number[])[]): { bottoms: number[]; tops: number[] }[] {
  const length = series[0]?.length ?? 0;
  const base = new Array<number>(length).fill(0);
  return series.map((values) => {
    const bottoms = base.slice();
    for (let i = 0; i < length; i++) {
      const v = values[i] ?? 0;
      base[i] = base[i]! + (Number.isFinite(v) ? Math.max(0, v) : 0);
    }
    return { bottoms, tops: base.slice() };
  });
}

/** Pixels an 11-px tick label needs, estimated without a DOM: wide (CJK) characters 11 px, others 6.6 px. */
export function tickLabelWidth(label: string): number {
  let width = 0;
  for (const ch of label) width += ch.codePointAt(0)! >= 0x2e80 ? 11 : 6.6;
  return Math.ceil(width);
}
