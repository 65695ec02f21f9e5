/**
 * The class lesson in five charts, every run overlaid in its own colour:
 * the trade-off (accuracy against traffic or simulated time, ./TradeoffChart.tsx), accuracy
 * and loss by round, the estimator's normalised variance (and the
 * compressed downlink's, dashed), and bytes per worker-round both ways. Redrawn a few times a second at most.
 */
import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import {
  Bar,
  BarChart,
  CartesianGrid,
  Cell,
  Line,
  LineChart,
  ReferenceLine,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';
import { ChartCard } from '../common/ChartCard';
import { formatBytes, formatNumber, roundLabel, schemeTag } from '../common/format';
import { AXIS_PROPS, COLOURS, LINE_PROPS, runColour } from '../common/palette';
import type { RunView } from '../store/dashboardStore';
import { TradeoffChart, percentTick, type Plotted } from './TradeoffChart';
import { useOrderedRuns } from './useOrderedRuns';

const HEIGHT = 230;

function Legend({ runs }: { readonly runs: readonly Plotted[] }) {
  const { t } = useTranslation();
  return (
    <ul className="legend" aria-label={t('dashboard.charts.legend')} translate="no">
      {runs.map(({ run, colour, label }) => (
        <li key={run.summary.runId}>
          <span className="legend__swatch" style={{ background: colour }} />
          {label}
        </li>
      ))}
    </ul>
  );
}

function RoundChart({
  runs,
  title,
  caption,
  testId,
  pick,
  pickDashed,
  dashedName,
  yTick,
  log,
}: {
  readonly runs: readonly Plotted[];
  readonly title: string;
  readonly caption: string;
  readonly testId: string;
  readonly pick: (run: RunView) => readonly { round: number; value: number }[];
  /** A second series per run, drawn dashed in the run's colour (skipped when empty). */
  readonly pickDashed?: (run: RunView) => readonly { round: number; value: number }[];
  readonly dashedName?: (label: string) => string;
  readonly yTick: (v: number) => string;
  readonly log?: boolean;
}) {
  const series = runs.map((r) => ({ ...r, data: pick(r.run), dashed: pickDashed?.(r.run) ?? [] }));
  const points = series.reduce((n, s) => n + s.data.length, 0);
  return (
    <ChartCard title={title} caption={caption} testId={testId} points={points}>
      <ResponsiveContainer width="100%" height={HEIGHT}>
        <LineChart margin={{ top: 8, right: 16, bottom: 0, left: -6 }}>
          <CartesianGrid stroke={COLOURS.grid} vertical={false} />
          <XAxis type="number" dataKey="round" domain={['dataMin', 'dataMax']} allowDecimals={false} {...AXIS_PROPS} />
          <YAxis
            type="number"
            dataKey="value"
            {...AXIS_PROPS}
            {...(log === true
              ? { scale: 'log' as const, domain: ['auto', 'auto'] as const, allowDataOverflow: true }
              : {})}
            tickFormatter={yTick}
          />
          <Tooltip formatter={(v) => yTick(Number(v))} labelFormatter={roundLabel} />
          {series.map(({ run, colour, label, data }) => (
            <Line key={run.summary.runId} data={data} dataKey="value" name={label} stroke={colour} {...LINE_PROPS} />
          ))}
          {series
            .filter(({ dashed }) => dashed.length > 0)
            .map(({ run, colour, label, dashed }) => (
              <Line
                key={`${run.summary.runId}-dashed`}
                data={dashed}
                dataKey="value"
                name={dashedName?.(label) ?? label}
                stroke={colour}
                strokeDasharray="5 4"
                {...LINE_PROPS}
              />
            ))}
        </LineChart>
      </ResponsiveContainer>
    </ChartCard>
  );
}

function BytesPerRoundChart({ runs }: { readonly runs: readonly Plotted[] }) {
  const { t } = useTranslation();
  const bars = runs
    .filter(({ run }) => run.contributions > 0)
    .map(({ run, colour }) => ({
      name: `${run.summary.config.name}`,
      scheme: schemeTag(run.summary.config),
      bytes: run.bytesUpTotal / run.contributions,
      down: run.participations === 0 ? 0 : run.bytesDownTotal / run.participations,
      colour,
    }));
  const dense = runs.find(({ run }) => run.summary.config.scheme === 'none' && run.contributions > 0);
  return (
    <ChartCard
      title={t('dashboard.charts.bytesTitle')}
      caption={t('dashboard.charts.bytesCaption')}
      testId="chart-bytes"
      points={bars.length}
    >
      <ResponsiveContainer width="100%" height={HEIGHT}>
        <BarChart data={bars} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
          <CartesianGrid stroke={COLOURS.grid} vertical={false} />
          <XAxis dataKey="scheme" {...AXIS_PROPS} interval={0} tick={{ fontSize: 10 }} />
          <YAxis
            {...AXIS_PROPS}
            scale="log"
            domain={[(min: number) => min / 4, (max: number) => max * 2]}
            allowDataOverflow
            tickFormatter={(v: number) => formatBytes(v)}
          />
          <Tooltip
            formatter={(v) => formatBytes(Number(v))}
            labelFormatter={(_, payload) => String(payload?.[0]?.payload?.name ?? '')}
          />
          {dense !== undefined && (
            <ReferenceLine
              y={dense.run.bytesUpTotal / dense.run.contributions}
              stroke={COLOURS.baseline}
              strokeDasharray="5 4"
            />
          )}
          <Bar dataKey="bytes" name={t('dashboard.charts.bytesUp')} isAnimationActive={false}>
            {bars.map((bar) => (
              <Cell key={bar.name} fill={bar.colour} />
            ))}
          </Bar>
          <Bar dataKey="down" name={t('dashboard.charts.bytesDown')} isAnimationActive={false}>
            {bars.map((bar) => (
              <Cell key={bar.name} fill={bar.colour} fillOpacity={0.45} />
            ))}
          </Bar>
        </BarChart>
      </ResponsiveContainer>
    </ChartCard>
  );
}

const accuracyOf = (run: RunView) => run.evals.points.map((p) => ({ round: p.round, value: p.accuracy }));
const lossOf = (run: RunView) => run.rounds.points.map((p) => ({ round: p.round, value: p.trainLoss }));
const varianceOf = (run: RunView) =>
  run.rounds.points.filter((p) => p.varianceRel > 0).map((p) => ({ round: p.round, value: p.varianceRel }));
const downlinkVarianceOf = (run: RunView) =>
  run.rounds.points
    .filter((p) => p.downlinkVarianceRel > 0)
    .map((p) => ({ round: p.round, value: p.downlinkVarianceRel }));

type RoundSeries = (run: RunView) => readonly { round: number; value: number }[];

/** The per-round charts of the grid, in order; a `pickDashed` chart also draws the downlink's series dashed. */
const ROUND_CHARTS: readonly {
  readonly title: 'dashboard.charts.accuracyTitle' | 'dashboard.charts.lossTitle' | 'dashboard.charts.varianceTitle';
  readonly caption:
    'dashboard.charts.accuracyCaption' | 'dashboard.charts.lossCaption' | 'dashboard.charts.varianceCaption';
  readonly testId: string;
  readonly pick: RoundSeries;
  readonly pickDashed?: RoundSeries;
  readonly yTick: (v: number) => string;
  readonly log?: boolean;
}[] = [
  {
    title: 'dashboard.charts.accuracyTitle',
    caption: 'dashboard.charts.accuracyCaption',
    testId: 'chart-accuracy',
    pick: accuracyOf,
    yTick: percentTick,
  },
  {
    title: 'dashboard.charts.lossTitle',
    caption: 'dashboard.charts.lossCaption',
    testId: 'chart-loss',
    pick: lossOf,
    yTick: formatNumber,
  },
  {
    title: 'dashboard.charts.varianceTitle',
    caption: 'dashboard.charts.varianceCaption',
    testId: 'chart-variance',
    pick: varianceOf,
    pickDashed: downlinkVarianceOf,
    yTick: formatNumber,
    log: true,
  },
];

/** The dashboard's chart section (a shared legend, then the charts); `projector` shows the trade-off alone, large. */
export function OverlayCharts({ projector = false }: { readonly projector?: boolean }) {
  const { t } = useTranslation();
  const ordered = useOrderedRuns();
  const runs = useMemo(
    () =>
      ordered.map((run, i) => ({
        run,
        colour: runColour(i),
        label: `${run.summary.config.name} (${schemeTag(run.summary.config)})`,
      })),
    [ordered],
  );
  if (projector) {
    return (
      <section className="overlay overlay--projector" aria-label={t('dashboard.charts.section')}>
        <Legend runs={runs} />
        <TradeoffChart runs={runs} height={Math.max(360, Math.round(window.innerHeight * 0.62))} />
      </section>
    );
  }
  return (
    <section className="overlay" aria-label={t('dashboard.charts.section')}>
      <Legend runs={runs} />
      <div className="overlay__grid">
        <div className="overlay__wide">
          <TradeoffChart runs={runs} height={HEIGHT + 40} />
        </div>
        {ROUND_CHARTS.map((chart) => (
          <RoundChart
            key={chart.testId}
            runs={runs}
            {...chart}
            title={t(chart.title)}
            caption={t(chart.caption)}
            dashedName={(name) => t('dashboard.charts.downlinkVariance', { name })}
          />
        ))}
        <BytesPerRoundChart runs={runs} />
      </div>
    </section>
  );
}
