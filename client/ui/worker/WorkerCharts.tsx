/**
 * The worker's four live charts: its minibatch loss, its bytes against
 * float32, its estimator variance (closed form and realised, over ‖g‖²), and
 * where each round's time went. A tab can train several rounds a second,
 * and the page must never stall (docs/design.md, "The tab's threads"): each
 * chart reads the history itself at most once a second, so the four redraw
 * in four short tasks, and draws with LiveChart, a few SVG paths.
 */
import { useTranslation } from 'react-i18next';
import { ChartCard } from '../common/ChartCard';
import {
  formatBytes,
  formatMs,
  formatNumber,
  formatPercent,
  ratioInWords,
  roundLabel,
  varianceFormula,
} from '../common/format';
import { LiveChart } from '../common/LiveChart';
import { COLOURS } from '../common/palette';
import type { WorkerRoundPoint, WorkerState } from '../store/workerStore';
import { workerStore } from '../store/workerStore';
import { useThrottledStore } from '../store/useThrottled';

const selectHistory = (s: WorkerState) => s.history.points;
const selectScheme = (s: WorkerState) => s.config?.scheme ?? null;
const selectFormula = (s: WorkerState) => (s.config === null ? 'Σλ²(1/p−1)' : varianceFormula(s.config));

/** A chart redraws at most this often: a round's point waits at most a second to show. */
const REDRAW_MS = 1_000;
/** Each chart is its own redraw group, so the four redraw in four short tasks rather than one long one. */
type ChartGroup = 'loss' | 'bytes' | 'variance' | 'time';
const useHistory = (group: ChartGroup) => useThrottledStore(workerStore, selectHistory, REDRAW_MS, group);

const HEIGHT = 210;
const round = (p: WorkerRoundPoint) => p.round;
const percentTick = (percent: number) => formatPercent(percent / 100).replace(/[.,]0(?=\D*$)/, '');
const msTick = (ms: number) => formatMs(ms);

function LossChart() {
  const { t } = useTranslation();
  const points = useHistory('loss');
  const last = points[points.length - 1];
  return (
    <ChartCard
      title={t('worker.charts.lossTitle')}
      caption={last === undefined ? undefined : t('worker.charts.lossCaption', { loss: last.loss.toFixed(3) })}
      testId="chart-loss"
      points={points.length}
    >
      <LiveChart
        points={points}
        x={round}
        series={[{ key: 'loss', name: t('worker.charts.lossSeries'), colour: COLOURS.primary, value: (p) => p.loss }]}
        yFormat={formatNumber}
        xLabel={roundLabel}
        height={HEIGHT}
      />
    </ChartCard>
  );
}

/**
 * Bytes of each round as a percentage of float32's, on a log axis: spectral
 * ATOMO sends a few percent, so on a linear byte axis its line would vanish
 * under the float32 line.
 */
function BytesChart() {
  const { t } = useTranslation();
  const points = useHistory('bytes');
  const last = points[points.length - 1];
  const sent = t('worker.charts.bytesSeries');
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
      legend={[{ name: sent, colour: COLOURS.primary }]}
    >
      <LiveChart
        points={points}
        x={round}
        series={[
          {
            key: 'percent',
            name: sent,
            colour: COLOURS.primary,
            value: (p) => (p.bytes > 0 && p.denseBytes > 0 ? (100 * p.bytes) / p.denseBytes : Number.NaN),
            format: (percent, p) => `${formatPercent(percent / 100)} (${formatBytes(p.bytes)})`,
          },
        ]}
        step
        yScale="log"
        yDomain={[0.05, 200]}
        yTicks={[0.1, 1, 10, 100]}
        yFormat={percentTick}
        xLabel={roundLabel}
        reference={{ y: 100, label: t('worker.charts.bytesFloat') }}
        height={HEIGHT}
      />
    </ChartCard>
  );
}

function VarianceChart() {
  const { t } = useTranslation();
  const points = useHistory('variance');
  const scheme = useThrottledStore(workerStore, selectScheme, REDRAW_MS, 'variance');
  const formula = useThrottledStore(workerStore, selectFormula, REDRAW_MS, 'variance');
  // A log axis cannot show zero: uncompressed rounds (and exact layers) have none.
  const positive = points.filter((p) => p.closedRel > 0 && p.realisedRel > 0);
  const last = positive[positive.length - 1];
  const series = [
    {
      key: 'closedRel',
      name: t('worker.charts.closedForm', { formula }),
      colour: COLOURS.closedForm,
      value: (p: WorkerRoundPoint) => p.closedRel,
    },
    {
      key: 'realisedRel',
      name: t('worker.charts.realised'),
      colour: COLOURS.realised,
      value: (p: WorkerRoundPoint) => p.realisedRel,
    },
  ];
  return (
    <ChartCard
      title={t('worker.charts.varianceTitle')}
      caption={
        last === undefined
          ? undefined
          : t('worker.charts.varianceCaption', { factor: formatNumber(Math.sqrt(last.realisedRel)) })
      }
      testId="chart-variance"
      points={positive.length}
      emptyText={scheme === 'none' ? t('worker.charts.varianceNone') : undefined}
      legend={series}
    >
      <LiveChart
        points={positive}
        x={round}
        series={series}
        yScale="log"
        yFormat={formatNumber}
        xLabel={roundLabel}
        height={HEIGHT}
      />
    </ChartCard>
  );
}

/** The time chart's stacked series: where a round's time went. */
const TIME_SERIES = [
  ['computeMs', 'worker.charts.compute', COLOURS.compute],
  ['compressMs', 'worker.charts.compress', COLOURS.compress],
  ['uploadMs', 'worker.charts.upload', COLOURS.upload],
] as const;

/**
 * The mean of each band over the rounds drawn (its height on average: which
 * band the chart shows taller), how many of the rounds drawn have their
 * compression band below their compute band, and the last round's own bands
 * with its number, unrounded (the caption rounds them to whole ms).
 */
function meanBands(points: readonly WorkerRoundPoint[]): Record<string, number> {
  const last = points[points.length - 1];
  if (last === undefined) return {};
  const mean = (key: (typeof TIME_SERIES)[number][0]) => points.reduce((sum, p) => sum + p[key], 0) / points.length;
  return {
    'compute-ms': mean('computeMs'),
    'compress-ms': mean('compressMs'),
    'upload-ms': mean('uploadMs'),
    'rounds-drawn': points.length,
    'rounds-compress-below': points.filter((p) => p.compressMs < p.computeMs).length,
    'last-round': last.round,
    'last-compute-ms': last.computeMs,
    'last-compress-ms': last.compressMs,
  };
}

function TimeChart() {
  const { t } = useTranslation();
  const points = useHistory('time');
  const last = points[points.length - 1];
  const series = TIME_SERIES.map(([key, name, colour]) => ({
    key,
    name: t(name),
    colour,
    value: (p: WorkerRoundPoint) => p[key],
  }));
  return (
    <ChartCard
      title={t('worker.charts.timeTitle')}
      caption={
        last === undefined
          ? undefined
          : t('worker.charts.timeCaption', {
              compute: formatMs(last.computeMs),
              compress: formatMs(last.compressMs),
              upload: formatMs(last.uploadMs),
            })
      }
      testId="chart-time"
      points={points.length}
      legend={series}
      data={meanBands(points)}
    >
      <LiveChart
        points={points}
        x={round}
        series={series}
        kind="stacked"
        step
        yFormat={msTick}
        xLabel={roundLabel}
        height={HEIGHT}
      />
    </ChartCard>
  );
}

/** The worker's chart grid. */
export function WorkerCharts() {
  return (
    <div className="chart-grid">
      <LossChart />
      <BytesChart />
      <VarianceChart />
      <TimeChart />
    </div>
  );
}
