/**
 * A light SVG chart for the tab's live curves: lines, step lines or stacked
 * step areas over the rounds, a linear or log y axis, a reference line, and
 * the values of the round under the pointer. A tab may train several rounds
 * a second on a student's phone, and its page must never stall
 * (docs/design.md, "The tab's threads"): a redraw here is one path string
 * per series and a dozen tick labels, where a general chart library spends
 * tens of milliseconds of selectors, measurements and effects.
 */
import { useEffect, useRef, useState, type PointerEvent, type RefObject } from 'react';
import {
  bandPath,
  linePath,
  linearDomain,
  logDomain,
  logTicks,
  niceTicks,
  scale,
  stack,
  tickLabelWidth,
} from './chartGeometry';
import { COLOURS } from './palette';

/** One plotted quantity of the points. */
export interface LiveSeries<P> {
  readonly key: string;
  readonly name: string;
  readonly colour: string;
  readonly value: (point: P) => number;
  /** How the hovered point's value reads (the axis format by default). */
  readonly format?: (value: number, point: P) => string;
}

/** Props of LiveChart. */
export interface LiveChartProps<P> {
  readonly points: readonly P[];
  /** The x of a point (its round). */
  readonly x: (point: P) => number;
  readonly series: readonly LiveSeries<P>[];
  /** Lines, or areas stacked in series order (bottom first). */
  readonly kind?: 'line' | 'stacked';
  /** Hold each value until the next point (steps), as per-round quantities are. */
  readonly step?: boolean;
  readonly yScale?: 'linear' | 'log';
  /** A fixed y domain; by default it follows the data (from 0 on a linear axis, whole decades on a log one). */
  readonly yDomain?: readonly [number, number];
  readonly yTicks?: readonly number[];
  readonly yFormat: (value: number) => string;
  /** The hovered point's title ("round 12"). */
  readonly xLabel: (x: number) => string;
  /** A dashed horizontal line with its label (float32 = 100%). */
  readonly reference?: { readonly y: number; readonly label: string };
  readonly height: number;
}

/** The plot's margins; the left one grows to the widest y label ("120 毫秒" needs more than "120 ms"). */
const MARGIN = { top: 8, right: 12, bottom: 22, left: 46 } as const;
const TICK_GAP = 6;

/** The width of an element, kept up to date as the layout changes. */
function useWidth(): [RefObject<HTMLDivElement | null>, number] {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(0);
  useEffect(() => {
    const element = ref.current;
    if (element === null) return;
    setWidth(element.clientWidth);
    const observer = new ResizeObserver(([entry]) => setWidth(Math.round(entry?.contentRect.width ?? 0)));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  return [ref, width];
}

/** The chart (its series paths carry class live-chart__series and data-series). */
export function LiveChart<P>(props: LiveChartProps<P>) {
  const { points, series, height, yFormat } = props;
  const [ref, width] = useWidth();
  const [hover, setHover] = useState<number | null>(null);
  const kind = props.kind ?? 'line';
  const log = props.yScale === 'log';

  const xs = points.map(props.x);
  const columns = series.map((s) => points.map(s.value));
  const bands = kind === 'stacked' ? stack(columns) : null;
  const shown = bands === null ? columns.flat() : bands.flatMap((b) => b.tops);
  if (props.reference !== undefined) shown.push(props.reference.y);
  const yDomain = props.yDomain ?? (log ? logDomain(shown) : linearDomain(shown));
  const yTicks = props.yTicks ?? (log ? logTicks(yDomain[0], yDomain[1]) : niceTicks(yDomain[0], yDomain[1]));
  const xDomain: [number, number] = xs.length === 0 ? [0, 1] : [xs[0]!, Math.max(xs[xs.length - 1]!, xs[0]! + 1)];
  const xTicks = niceTicks(xDomain[0], xDomain[1], Math.max(2, Math.floor(width / 90))).filter(Number.isInteger);

  const yLabels = yTicks.map(yFormat);
  const left = Math.max(MARGIN.left, TICK_GAP + 2 + Math.max(0, ...yLabels.map(tickLabelWidth)));
  const plotRight = Math.max(left + 1, width - MARGIN.right);
  const plotBottom = height - MARGIN.bottom;
  const sx = scale(xDomain, [left, plotRight]);
  const sy = scale(yDomain, [plotBottom, MARGIN.top], log ? 'log' : 'linear');
  const px = xs.map(sx);
  const step = props.step === true;

  const onMove = (event: PointerEvent<SVGSVGElement>) => {
    if (points.length === 0) return;
    const box = event.currentTarget.getBoundingClientRect();
    const at = event.clientX - box.left;
    let nearest = 0;
    for (let i = 1; i < px.length; i++) if (Math.abs(px[i]! - at) < Math.abs(px[nearest]! - at)) nearest = i;
    setHover(nearest);
  };
  const hovered = hover === null ? undefined : points[hover];

  return (
    <div className="live-chart" ref={ref} style={{ height }}>
      {width > 0 && (
        <svg
          width={width}
          height={height}
          onPointerMove={onMove}
          onPointerLeave={() => setHover(null)}
          aria-hidden="true"
        >
          {yTicks.map((tick, i) => (
            <g key={tick}>
              <line x1={left} x2={plotRight} y1={sy(tick)} y2={sy(tick)} stroke={COLOURS.grid} />
              <text x={left - TICK_GAP} y={sy(tick)} dy="0.32em" textAnchor="end" className="live-chart__tick">
                {yLabels[i]}
              </text>
            </g>
          ))}
          {xTicks.map((tick) => (
            <text key={tick} x={sx(tick)} y={plotBottom + 15} textAnchor="middle" className="live-chart__tick">
              {tick}
            </text>
          ))}
          <line x1={left} x2={plotRight} y1={plotBottom} y2={plotBottom} stroke={COLOURS.axis} />
          {series.map((s, i) =>
            bands === null ? (
              <path
                key={s.key}
                className="live-chart__series"
                data-series={s.key}
                d={linePath(
                  px,
                  columns[i]!.map((v) => (log && !(v > 0) ? Number.NaN : sy(v))),
                  step,
                )}
                fill="none"
                stroke={s.colour}
                strokeWidth={2}
              />
            ) : (
              <path
                key={s.key}
                className="live-chart__series"
                data-series={s.key}
                d={bandPath(px, bands[i]!.tops.map(sy), bands[i]!.bottoms.map(sy), step)}
                fill={s.colour}
                fillOpacity={0.85}
                stroke="none"
              />
            ),
          )}
          {props.reference !== undefined && (
            <g>
              <line
                x1={left}
                x2={plotRight}
                y1={sy(props.reference.y)}
                y2={sy(props.reference.y)}
                stroke={COLOURS.baseline}
                strokeDasharray="5 4"
                strokeWidth={2}
              />
              <text x={plotRight - 4} y={sy(props.reference.y) + 14} textAnchor="end" className="live-chart__tick">
                {props.reference.label}
              </text>
            </g>
          )}
          {hover !== null && (
            <line
              x1={px[hover]}
              x2={px[hover]}
              y1={MARGIN.top}
              y2={plotBottom}
              stroke={COLOURS.axis}
              strokeDasharray="3 3"
            />
          )}
        </svg>
      )}
      {hovered !== undefined && hover !== null && (
        <div className="live-chart__tooltip" style={{ left: Math.min(px[hover]! + 8, Math.max(0, width - 170)) }}>
          <strong>{props.xLabel(xs[hover]!)}</strong>
          {series.map((s) => (
            <span key={s.key}>
              <span className="chart-legend__swatch" style={{ background: s.colour }} aria-hidden="true" />
              {s.name}: {(s.format ?? yFormat)(s.value(hovered), hovered)}
            </span>
          ))}
        </div>
      )}
    </div>
  );
}
