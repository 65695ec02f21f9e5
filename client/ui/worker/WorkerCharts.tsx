/**
 * The worker's four live charts: its minibatch loss, its bytes against
 * float32, its estimator variance (closed form and realised, over ‖g‖²), and
 * where each round's time went. They redraw a few times a second at most.
 */
import { useTranslation } from 'react-i18next';
import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, ReferenceLine, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { ChartCard } from '../common/ChartCard';
import { formatBytes, formatMs, formatNumber, formatPercent, ratioInWords, roundLabel, varianceFormula } from '../common/format';
import { COLORS } from '../common/palette';
import type { WorkerRoundPoint, WorkerState } from '../store/workerStore';
import { workerStore } from '../store/workerStore';
import { useThrottledStore } from '../store/useThrottled';

const selectHistory = (s: WorkerState) => s.history.points;
const selectScheme = (s: WorkerState) => s.config?.scheme ?? null;
const selectFormula = (s: WorkerState) => (s.config === null ? 'Σλ²(1/p−1)' : varianceFormula(s.config));

const HEIGHT = 210;
const axisProps = { stroke: COLORS.axis, fontSize: 11, tickLine: false } as const;
const percentTick = (percent: number) => formatPercent(percent / 100).replace(/[.,]0(?=\D*$)/, '');

function LossChart({ points }: { readonly points: readonly WorkerRoundPoint[] }) {
  const { t } = useTranslation();
  const last = points[points.length - 1];
  return (
    <ChartCard
      title={t('worker.charts.lossTitle')}
      caption={last === undefined ? undefined : t('worker.charts.lossCaption', { loss: last.loss.toFixed(3) })}
      testId="chart-loss"
      points={points.length}
    >
      <ResponsiveContainer width="100%" height={HEIGHT}>
        <LineChart data={points} margin={{ top: 8, right: 12, bottom: 0, left: -12 }}>
          <CartesianGrid stroke={COLORS.grid} vertical={false} />
          <XAxis dataKey="round" {...axisProps} />
          <YAxis {...axisProps} tickFormatter={formatNumber} />
          <Tooltip formatter={(v) => formatNumber(Number(v))} labelFormatter={roundLabel} />
          <Line
            type="monotone"
            dataKey="loss"
            name={t('worker.charts.lossSeries')}
            stroke={COLORS.primary}
            strokeWidth={2}
            dot={false}
            isAnimationActive={false}
          />
        </LineChart>
      </ResponsiveContainer>
    </ChartCard>
  );
}

/**
 * Bytes of each round as a percentage of float32's, on a log axis: spectral
 * ATOMO sends a few percent, so on a linear byte axis its bars would vanish
 * under the float32 line.
 */
function BytesChart({ points }: { readonly points: readonly WorkerRoundPoint[] }) {
  const { t } = useTranslation();
  const last = points[points.length - 1];
  const data = points.filter((p) => p.bytes > 0 && p.denseBytes > 0).map((p) => ({ round: p.round, percent: (100 * p.bytes) / p.denseBytes, bytes: p.bytes }));
  return (
    <ChartCard
      title={t('worker.charts.bytesTitle')}
      caption={
        last === undefined
          ? undefined
          : t('worker.charts.bytesCaption', {
              bytes: formatBytes(last.bytes),
              dense: formatBytes(last.denseBytes),
              ratio: ratioInWords(last.bytes, last.denseBytes),
            })
      }
      testId="chart-bytes"
      points={points.length}
    >
      <ResponsiveContainer width="100%" height={HEIGHT}>
        <BarChart data={data} margin={{ top: 8, right: 12, bottom: 0, left: -4 }}>
          <CartesianGrid stroke={COLORS.grid} vertical={false} />
          <XAxis dataKey="round" {...axisProps} />
          <YAxis
            {...axisProps}
            scale="log"
            domain={[(min: number) => Math.min(min, 1) / 2, 200]}
            allowDataOverflow
            ticks={[0.1, 1, 10, 100]}
            tickFormatter={percentTick}
          />
          <Tooltip
            formatter={(v, _name, item) =>
              `${formatPercent(Number(v) / 100)} (${formatBytes(Number((item.payload as { bytes?: number } | undefined)?.bytes ?? 0))})`
            }
            labelFormatter={roundLabel}
          />
          <Legend iconSize={10} wrapperStyle={{ fontSize: 12 }} />
          <ReferenceLine
            y={100}
            stroke={COLORS.baseline}
            strokeDasharray="5 4"
            strokeWidth={2}
            label={{ value: t('worker.charts.bytesFloat'), position: 'insideTopRight', fontSize: 11, fill: COLORS.axis }}
          />
          <Bar dataKey="percent" name={t('worker.charts.bytesSeries')} fill={COLORS.primary} isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </ChartCard>
  );
}

function VarianceChart({
  points,
  scheme,
  formula,
}: {
  readonly points: readonly WorkerRoundPoint[];
  readonly scheme: string | null;
  readonly formula: string;
}) {
  const { t } = useTranslation();
  // A log axis cannot show zero: uncompressed rounds (and exact layers) have none.
  const positive = points.filter((p) => p.closedRel > 0 && p.realisedRel > 0);
  const last = positive[positive.length - 1];
  return (
    <ChartCard
      title={t('worker.charts.varianceTitle')}
      caption={last === undefined ? undefined : t('worker.charts.varianceCaption', { factor: formatNumber(Math.sqrt(last.realisedRel)) })}
      testId="chart-variance"
      points={positive.length}
      emptyText={scheme === 'none' ? t('worker.charts.varianceNone') : undefined}
    >
      <ResponsiveContainer width="100%" height={HEIGHT}>
        <LineChart data={positive} margin={{ top: 8, right: 12, bottom: 0, left: -12 }}>
          <CartesianGrid stroke={COLORS.grid} vertical={false} />
          <XAxis dataKey="round" {...axisProps} />
          <YAxis {...axisProps} scale="log" domain={['auto', 'auto']} allowDataOverflow tickFormatter={formatNumber} />
          <Tooltip formatter={(v) => formatNumber(Number(v))} labelFormatter={roundLabel} />
          <Legend iconSize={10} wrapperStyle={{ fontSize: 12 }} />
          <Line
            type="monotone"
            dataKey="closedRel"
            name={t('worker.charts.closedForm', { formula })}
            stroke={COLORS.closedForm}
            strokeWidth={2}
            dot={false}
            isAnimationActive={false}
          />
          <Line
            type="monotone"
            dataKey="realisedRel"
            name={t('worker.charts.realised')}
            stroke={COLORS.realised}
            strokeWidth={1.5}
            dot={false}
            isAnimationActive={false}
          />
        </LineChart>
      </ResponsiveContainer>
    </ChartCard>
  );
}

function TimeChart({ points }: { readonly points: readonly WorkerRoundPoint[] }) {
  const { t } = useTranslation();
  const last = points[points.length - 1];
  return (
    <ChartCard
      title={t('worker.charts.timeTitle')}
      caption={
        last === undefined
          ? undefined
          : t('worker.charts.timeCaption', { compute: formatMs(last.computeMs), compress: formatMs(last.compressMs), upload: formatMs(last.uploadMs) })
      }
      testId="chart-time"
      points={points.length}
    >
      <ResponsiveContainer width="100%" height={HEIGHT}>
        <BarChart data={points} margin={{ top: 8, right: 12, bottom: 0, left: -12 }}>
          <CartesianGrid stroke={COLORS.grid} vertical={false} />
          <XAxis dataKey="round" {...axisProps} />
          <YAxis {...axisProps} tickFormatter={(v: number) => formatMs(v)} />
          <Tooltip formatter={(v) => formatMs(Number(v))} labelFormatter={roundLabel} />
          <Legend iconSize={10} wrapperStyle={{ fontSize: 12 }} />
          <Bar dataKey="computeMs" name={t('worker.charts.compute')} stackId="t" fill={COLORS.compute} isAnimationActive={false} />
          <Bar dataKey="compressMs" name={t('worker.charts.compress')} stackId="t" fill={COLORS.compress} isAnimationActive={false} />
          <Bar dataKey="uploadMs" name={t('worker.charts.upload')} stackId="t" fill={COLORS.upload} isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </ChartCard>
  );
}

/** The worker's chart grid. */
export function WorkerCharts() {
  const points = useThrottledStore(workerStore, selectHistory);
  const scheme = useThrottledStore(workerStore, selectScheme);
  const formula = useThrottledStore(workerStore, selectFormula);
  return (
    <div className="chart-grid">
      <LossChart points={points} />
      <BytesChart points={points} />
      <VarianceChart points={points} scheme={scheme} formula={formula} />
      <TimeChart points={points} />
    </div>
  );
}
