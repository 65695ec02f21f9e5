/**
 * The worker's four live charts: its minibatch loss, its bytes against
 * float32, its estimator variance (closed form and realised, over ‖g‖²), and
 * where each round's time went. They redraw a few times a second at most.
 */
import { Bar, BarChart, CartesianGrid, ComposedChart, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { ChartCard } from '../common/ChartCard';
import { formatBytes, formatMs, formatNumber, ratioInWords, varianceFormula } from '../common/format';
import { COLORS } from '../common/palette';
import type { WorkerRoundPoint, WorkerState } from '../store/workerStore';
import { workerStore } from '../store/workerStore';
import { useThrottledStore } from '../store/useThrottled';

const selectHistory = (s: WorkerState) => s.history.points;
const selectScheme = (s: WorkerState) => s.config?.scheme ?? null;
const selectFormula = (s: WorkerState) => (s.config === null ? 'Σλ²(1/p−1)' : varianceFormula(s.config));

const HEIGHT = 210;
const axisProps = { stroke: COLORS.axis, fontSize: 11, tickLine: false } as const;
const kb = (bytes: number) => `${formatNumber(bytes / 1000)} kB`;

function LossChart({ points }: { readonly points: readonly WorkerRoundPoint[] }) {
  const last = points[points.length - 1];
  return (
    <ChartCard title="Minibatch loss" caption={last === undefined ? undefined : `Latest: ${last.loss.toFixed(3)} (lower is better)`} testId="chart-loss" points={points.length}>
      <ResponsiveContainer width="100%" height={HEIGHT}>
        <LineChart data={points} margin={{ top: 8, right: 12, bottom: 0, left: -12 }}>
          <CartesianGrid stroke={COLORS.grid} vertical={false} />
          <XAxis dataKey="round" {...axisProps} />
          <YAxis {...axisProps} tickFormatter={formatNumber} />
          <Tooltip formatter={(v) => formatNumber(Number(v))} labelFormatter={(r) => `Round ${r}`} />
          <Line type="monotone" dataKey="loss" name="loss" stroke={COLORS.primary} strokeWidth={2} dot={false} isAnimationActive={false} />
        </LineChart>
      </ResponsiveContainer>
    </ChartCard>
  );
}

function BytesChart({ points }: { readonly points: readonly WorkerRoundPoint[] }) {
  const last = points[points.length - 1];
  return (
    <ChartCard
      title="Bytes sent per round"
      caption={last === undefined ? undefined : `${formatBytes(last.bytes)} instead of ${formatBytes(last.denseBytes)}: ${ratioInWords(last.bytes, last.denseBytes)}`}
      testId="chart-bytes"
      points={points.length}
    >
      <ResponsiveContainer width="100%" height={HEIGHT}>
        <ComposedChart data={points} margin={{ top: 8, right: 12, bottom: 0, left: -4 }}>
          <CartesianGrid stroke={COLORS.grid} vertical={false} />
          <XAxis dataKey="round" {...axisProps} />
          <YAxis {...axisProps} tickFormatter={kb} />
          <Tooltip formatter={(v) => formatBytes(Number(v))} labelFormatter={(r) => `Round ${r}`} />
          <Legend iconSize={10} wrapperStyle={{ fontSize: 12 }} />
          <Bar dataKey="bytes" name="sent (compressed)" fill={COLORS.primary} isAnimationActive={false} />
          <Line type="stepAfter" dataKey="denseBytes" name="float32 would be" stroke={COLORS.baseline} strokeDasharray="5 4" strokeWidth={2} dot={false} isAnimationActive={false} />
        </ComposedChart>
      </ResponsiveContainer>
    </ChartCard>
  );
}

function VarianceChart({ points, scheme, formula }: { readonly points: readonly WorkerRoundPoint[]; readonly scheme: string | null; readonly formula: string }) {
  // A log axis cannot show zero: uncompressed rounds (and exact layers) have none.
  const positive = points.filter((p) => p.closedRel > 0 && p.realisedRel > 0);
  const last = positive[positive.length - 1];
  return (
    <ChartCard
      title="Estimator variance ÷ ‖g‖²"
      caption={last === undefined ? undefined : `The price of sending less: the estimate is off by ${formatNumber(Math.sqrt(last.realisedRel))}× the gradient's size this round.`}
      testId="chart-variance"
      points={positive.length}
      emptyText={scheme === 'none' ? 'Uncompressed: the gradient is sent exactly, no variance.' : undefined}
    >
      <ResponsiveContainer width="100%" height={HEIGHT}>
        <LineChart data={positive} margin={{ top: 8, right: 12, bottom: 0, left: -12 }}>
          <CartesianGrid stroke={COLORS.grid} vertical={false} />
          <XAxis dataKey="round" {...axisProps} />
          <YAxis {...axisProps} scale="log" domain={['auto', 'auto']} allowDataOverflow tickFormatter={formatNumber} />
          <Tooltip formatter={(v) => formatNumber(Number(v))} labelFormatter={(r) => `Round ${r}`} />
          <Legend iconSize={10} wrapperStyle={{ fontSize: 12 }} />
          <Line type="monotone" dataKey="closedRel" name={`closed form ${formula}`} stroke={COLORS.closedForm} strokeWidth={2} dot={false} isAnimationActive={false} />
          <Line type="monotone" dataKey="realisedRel" name="realised ‖ĝ−g‖²" stroke={COLORS.realised} strokeWidth={1.5} dot={false} isAnimationActive={false} />
        </LineChart>
      </ResponsiveContainer>
    </ChartCard>
  );
}

function TimeChart({ points }: { readonly points: readonly WorkerRoundPoint[] }) {
  const last = points[points.length - 1];
  return (
    <ChartCard
      title="Time per round"
      caption={last === undefined ? undefined : `Compute ${formatMs(last.computeMs)}, compress ${formatMs(last.compressMs)}, upload ${formatMs(last.uploadMs)}`}
      testId="chart-time"
      points={points.length}
    >
      <ResponsiveContainer width="100%" height={HEIGHT}>
        <BarChart data={points} margin={{ top: 8, right: 12, bottom: 0, left: -12 }}>
          <CartesianGrid stroke={COLORS.grid} vertical={false} />
          <XAxis dataKey="round" {...axisProps} />
          <YAxis {...axisProps} tickFormatter={(v: number) => formatMs(v)} />
          <Tooltip formatter={(v) => formatMs(Number(v))} labelFormatter={(r) => `Round ${r}`} />
          <Legend iconSize={10} wrapperStyle={{ fontSize: 12 }} />
          <Bar dataKey="computeMs" name="compute" stackId="t" fill={COLORS.compute} isAnimationActive={false} />
          <Bar dataKey="compressMs" name="compress" stackId="t" fill={COLORS.compress} isAnimationActive={false} />
          <Bar dataKey="uploadMs" name="upload" stackId="t" fill={COLORS.upload} isAnimationActive={false} />
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
